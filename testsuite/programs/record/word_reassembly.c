/* Values put together again from their 32-bit words in general registers
 * (`shl r, 32; or r, r`, as gcc -O3 -march=native compiles a long double
 * copied word by word through a function): the words move, and with them
 * the index, as `mov` would move them. Before, the long double came out a
 * constant, silently (derivative 0).
 *   y0 = c·b, c the long double a + b reassembled   dy0/da = b, dy0/db = a + 2b
 *   y1 = g0 + 10 g1, floats 2a and 3b packed by or   dy1/da = 2, dy1/db = 30
 * A double put together so is not followed (set_high_word.c): its low
 * word under another high word is another value.
 * Prints the values and the Jacobian (`expect OUTPUT INPUT d`) for
 * testsuite/tests/record_vector_rules.rs. */
#include <stdio.h>
#include <string.h>
#include <valgrind/derivgrind.h>

/* The first 8 bytes of *p put together from their two words into *q. */
static void reassemble(const void *p, void *q)
{
    __asm__ volatile("movq (%0), %%rdx\n\t"
                     "movl %%edx, %%ecx\n\t"
                     "shrq $32, %%rdx\n\t"
                     "shlq $32, %%rdx\n\t"
                     "orq %%rdx, %%rcx\n\t"
                     "movq %%rcx, (%1)"
                     :
                     : "r"(p), "r"(q)
                     : "rcx", "rdx", "memory");
}

int main(void)
{
    double a = 1.5, b = -2.25;
    DG_INPUTF(a);
    DG_INPUTF(b);

    long double t = (long double)a + (long double)b, c0;
    memcpy(&c0, &t, sizeof t);
    reassemble(&t, &c0);
    double y0 = (double)(c0 * (long double)b);

    float f[2] = {2.0f * (float)a, 3.0f * (float)b}, g[2];
    __asm__ volatile("movl (%0), %%eax\n\t"
                     "movl 4(%0), %%edx\n\t"
                     "shlq $32, %%rdx\n\t"
                     "orq %%rdx, %%rax\n\t"
                     "movq %%rax, (%1)"
                     :
                     : "r"(f), "r"(g)
                     : "rax", "rdx", "memory");
    double y1 = (double)g[0] + 10.0 * (double)g[1];

    DG_OUTPUTF(y0);
    DG_OUTPUTF(y1);
    printf("y0 %.17g\ny1 %.17g\n", y0, y1);
    printf("expect 0 0 %.17g\nexpect 0 1 %.17g\n", b, a + 2.0 * b);
    printf("expect 1 0 2\nexpect 1 1 30\n");
    printf("END word_reassembly\n");
    return 0;
}
