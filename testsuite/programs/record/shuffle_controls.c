/* Moves whose selector is not data (decision 7's replay on shadows): the
 * shuffle control in *memory* (`vpermilps ymm, ymm, m256` — gcc -O3
 * -march=haswell emits it in float reductions —, `vpermilpd`, `pshufb`,
 * `vpshufb`), and a blend whose mask register is also one of its data
 * operands (`vblendvpd x0, x1, x0, x0`: lanes where a < 0 take a). The
 * replay once read memory controls from their shadows (every lane took
 * element 0) and loaded an aliased mask with its shadow (the value bits
 * went onto the tape as indices).
 *
 * Inputs x[0..8) (double). Each output is a weighted sum; the program
 * prints the gradient (`expect OUTPUT INPUT d`) from the controls, for
 * testsuite/tests/record_vector_rules.rs. Needs AVX2. */
#include <stdio.h>
#include <string.h>
#include <valgrind/derivgrind.h>

#define N 8
static double x[N];
static double expect[4][N];
static const double w[N] = {1, 2, 3, 4, 5, 6, 7, 8};

__attribute__((target("avx2"))) int main(void)
{
    static const double x0[N] = {3.3, -0.37, 12.5, 0.8, -5.75, 1.4, 0.31, 7.0};
    for (int i = 0; i < N; i++) {
        x[i] = x0[i];
        DG_INPUTF(x[i]);
    }
    double y[4];

    /* 0: vpermilps with the control in memory, on x as floats: lane i
     * takes element 4 (i / 4) + c[i]. */
    static const int c0[N] = {3, 0, 2, 1, 1, 3, 0, 2};
    float f0[N];
    __asm__ volatile("vcvtpd2psy %1, %%xmm0\n\t"
                     "vcvtpd2psy %2, %%xmm1\n\t"
                     "vinsertf128 $1, %%xmm1, %%ymm0, %%ymm0\n\t"
                     "vpermilps %3, %%ymm0, %%ymm0\n\t"
                     "vmovups %%ymm0, %0"
                     : "=m"(f0)
                     : "m"(*(double(*)[4])&x[0]), "m"(*(double(*)[4])&x[4]), "m"(c0)
                     : "xmm0", "xmm1");
    y[0] = 0;
    for (int i = 0; i < N; i++) {
        y[0] += w[i] * (double)f0[i];
        expect[0][4 * (i / 4) + c0[i]] += w[i];
    }

    /* 1: vpermilpd with the control (bit 1 of each qword) in memory. */
    static const long long c1[4] = {2, 0, 0, 2};
    double d1[4];
    __asm__ volatile("vmovupd %1, %%ymm0\n\t"
                     "vpermilpd %2, %%ymm0, %%ymm0\n\t"
                     "vmovupd %%ymm0, %0"
                     : "=m"(d1)
                     : "m"(*(double(*)[4])&x[0]), "m"(c1)
                     : "xmm0");
    y[1] = 0;
    for (int i = 0; i < 4; i++) {
        y[1] += w[i] * d1[i];
        expect[1][2 * (i / 2) + ((c1[i] >> 1) & 1)] += w[i];
    }

    /* 2: pshufb and vpshufb with byte controls in memory that move whole
     * doubles: swap the two of each 128-bit half, then (vpshufb, ymm)
     * swap them back and duplicate the low one of the upper half. */
    static const unsigned char c2[16] = {8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7};
    static const unsigned char c3[32] = {8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7,
                                         0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7};
    double d2[2], d3[4];
    __asm__ volatile("movupd %2, %%xmm0\n\t"
                     "pshufb %3, %%xmm0\n\t"
                     "movupd %%xmm0, %0\n\t"
                     "vmovupd %4, %%ymm1\n\t"
                     "vpshufb %5, %%ymm1, %%ymm1\n\t"
                     "vmovupd %%ymm1, %1"
                     : "=m"(d2), "=m"(d3)
                     : "m"(*(double(*)[2])&x[0]), "m"(c2), "m"(*(double(*)[4])&x[4]), "m"(c3)
                     : "xmm0", "xmm1");
    y[2] = w[0] * d2[0] + w[1] * d2[1];
    expect[2][1] += w[0];
    expect[2][0] += w[1];
    static const int src3[4] = {5, 4, 6, 6};
    for (int i = 0; i < 4; i++) {
        y[2] += w[2 + i] * d3[i];
        expect[2][src3[i]] += w[2 + i];
    }

    /* 3: vblendvpd whose mask is also the second source: a < 0 ? a : b. */
    double d4[2], d5[2];
    for (int j = 0; j < 4; j += 2) {
        __asm__ volatile("vmovupd %1, %%xmm0\n\t"
                         "vmovupd %2, %%xmm1\n\t"
                         "vblendvpd %%xmm0, %%xmm0, %%xmm1, %%xmm0\n\t"
                         "vmovupd %%xmm0, %0"
                         : "=m"(*(double(*)[2])(j ? d5 : d4))
                         : "m"(*(double(*)[2])&x[j]), "m"(*(double(*)[2])&x[4 + j])
                         : "xmm0", "xmm1");
    }
    y[3] = w[0] * d4[0] + w[1] * d4[1] + w[2] * d5[0] + w[3] * d5[1];
    for (int i = 0; i < 4; i++) expect[3][x0[i] < 0 ? i : 4 + i] += w[i];

    for (int o = 0; o < 4; o++) {
        DG_OUTPUTF(y[o]);
        printf("y%d = %.9g\n", o, y[o]);
    }
    for (int o = 0; o < 4; o++) {
        for (int i = 0; i < N; i++) printf("expect %d %d %.17g\n", o, i, expect[o][i]);
    }
    printf("END shuffle_controls\n");
    return 0;
}
