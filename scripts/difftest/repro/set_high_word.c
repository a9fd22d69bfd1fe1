/* fdlibm's SET_HIGH_WORD (glibc's __log1p, reached through clog, catan,
 * cpow, ... which are not wrapped): the low word is kept by a 32-bit mov
 * (`mov edx, edx`, the index lives in the low 4 bytes and moves with it),
 * the new high word -- the exponent replaced, computed with integer
 * instructions, passive -- is or-ed in.  dgad reads the result as the
 * value itself (partial 1); the true partial is 2^(new exponent - old).
 * x = 2.6 (exponent 1) -> high word with exponent 0x3ff -> y = 1.3:
 * dy/dx = 0.5 expected.
 *
 *   gcc -O2 -I<dgad>/include set_high_word.c -o shw
 *   DGAD_RECORD=/tmp/shw LD_PRELOAD=<dgad>/target/release/libdgad.so ./shw
 *   echo 1 > /tmp/shw/dg-output-bars; <dgad>/target/release/dg-eval /tmp/shw   # 1, expected 0.5 */
#include <dgad.h>
#include <stdint.h>
#include <string.h>
static double set_high_word(double d, uint32_t hi)
{
    uint64_t i;
    memcpy(&i, &d, 8);
    i = (i & 0xffffffffu) | ((uint64_t)hi << 32);
    memcpy(&d, &i, 8);
    return d;
}
static uint32_t high_word(double d) { uint64_t i; memcpy(&i, &d, 8); return (uint32_t)(i >> 32); }
int main(void)
{
    double x = 2.6;
    dgad_input(&x);
    double y = set_high_word(x, (high_word(x) & 0x000fffff) | 0x3ff00000);  /* 1.3 */
    dgad_output(&y);
    return 0;
}
