/* A byte blend that takes a float apart: `pblendvb` (SSE4.1, in inline
 * assembly) with a mask that picks byte 0 of lane 0 from `a` and bytes
 * 1..3 from `b`. The result is no value of the program (b with a's lowest
 * significand byte); replayed byte by byte on index shadows it would name
 * a third input (the indices of a = v[300] and b = v[555] are above 255,
 * so their bytes differ in two places). dgad must make it a reported
 * constant: testsuite/tests/record_vector_rules.rs checks the report and
 * that the gradient of y is zero. Inputs v[0..600), one output y. */
#include <stdio.h>
#include <valgrind/derivgrind.h>

#define N 600

int main(void)
{
    static float v[N];
    for (int i = 0; i < N; i++) {
        v[i] = 1.0f + (float)i * 1e-3f;
        DG_INPUTF(v[i]);
    }
    float a[4] = {v[300], 0, 0, 0}, b[4] = {v[555], 0, 0, 0}, r[4];
    static const unsigned char mask[16] __attribute__((aligned(16))) = {0x80};
    __asm__ volatile("movups %1, %%xmm3\n\t"
                     "movups %2, %%xmm1\n\t"
                     "movdqa %3, %%xmm0\n\t"
                     "pblendvb %%xmm0, %%xmm3, %%xmm1\n\t"
                     "movups %%xmm1, %0"
                     : "=m"(r)
                     : "m"(a), "m"(b), "m"(mask)
                     : "xmm0", "xmm1", "xmm3");
    float y = r[0];
    DG_OUTPUTF(y);
    printf("y = %.9g\n", y);
    printf("END byte_blend\n");
    return 0;
}
