/* fdlibm's SET_HIGH_WORD in a general register (glibc's internal
 * __log1p, reached through clog, catan, cpow; scipy.special.jv): the
 * double's low word is kept (`mov edx, edx`, its index with it) and a new
 * high word, another exponent computed with integer instructions, is
 * or-ed above it. The result is x·2^k, not x: the rule cannot follow it,
 * so it must say so (before: derivative 1, silently; expected 0.5 here).
 * Prints y; the test reads the report from stderr. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <valgrind/derivgrind.h>

static double set_high_word(double d, uint32_t hi)
{
    uint64_t i;
    memcpy(&i, &d, 8);
    __asm__ volatile("movl %k0, %k0\n\t"
                     "shlq $32, %1\n\t"
                     "orq %1, %0"
                     : "+r"(i), "+r"(*(uint64_t[]){hi}));
    memcpy(&d, &i, 8);
    return d;
}

int main(void)
{
    double x = 2.6;
    DG_INPUTF(x);
    uint64_t bits;
    memcpy(&bits, &x, 8);
    uint32_t hi = (uint32_t)(bits >> 32);
    double y = set_high_word(x, (hi & 0x000fffff) | 0x3ff00000); /* 1.3 */
    DG_OUTPUTF(y);
    printf("y %.17g\nEND set_high_word\n", y);
    return 0;
}
