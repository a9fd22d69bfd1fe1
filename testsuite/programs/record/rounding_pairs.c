/* Sums with a large constant and the rounding trick (issue 16, point 1).
 * Adding a constant c in [2^52, 2^54) (floats: [2^23, 2^25)) or one of the
 * exponent-bias shifters is an ordinary sum, derivative 1: `t*1e15 + 5e15`,
 * a Horner polynomial ending in 9.7e15 (cephes' j0). Only the pair
 * `(x + c) - c` with a shifter c (2^e or 1.5*2^e plus a small bias), x
 * rounded to c's grid, is a staircase, derivative 0: in
 * doubles and floats, scalar and in vectorised loops, and with the sum
 * inside an FMA (`fma(x, 16/ln 2, 1.5*2^48 + 1023) - shifter`, as
 * vectorised exp kernels find their integer part).
 *
 * Inputs x[0..8) (double). The program prints the gradient (`expect
 * OUTPUT INPUT d`), worked out by hand, for
 * testsuite/tests/record_vector_rules.rs. The FMA part uses FMA
 * instructions where the CPU has them and a multiply and an add
 * elsewhere; the derivatives are the same. */
#include <stdio.h>
#include <valgrind/derivgrind.h>

#define N 8
#define K 16
static double x[N];
static double expect[8][N];

/* Out of the compiler's sight, so that it cannot fold the pairs. */
static volatile double shift52 = 0x1.8p52;
static volatile float shift23 = 0x1.8p23f;

__attribute__((target("fma"))) static void fma_forms(const double *v, double c1, double shifter,
                                                     double *n, double *p)
{
    /* n[j] = fma(v[j], c1, shifter) in one packed instruction; p =
     * fma(v[0], 1e15, 5e15), a plain sum. */
    __asm__ volatile("vmovupd %2, %%ymm0\n\t"
                     "vbroadcastsd %3, %%ymm1\n\t"
                     "vbroadcastsd %4, %%ymm2\n\t"
                     "vfmadd213pd %%ymm2, %%ymm1, %%ymm0\n\t"
                     "vmovupd %%ymm0, %0\n\t"
                     "vmovsd %5, %%xmm0\n\t"
                     "vmovsd %6, %%xmm1\n\t"
                     "vfmadd213sd %7, %%xmm1, %%xmm0\n\t"
                     "vmovsd %%xmm0, %1\n\t"
                     "vzeroupper"
                     : "=m"(*(double(*)[4])n), "=m"(*p)
                     : "m"(*(const double(*)[4])v), "m"(c1), "m"(shifter), "m"(v[0]),
                       "m"((double){1e15}), "m"((double){5e15})
                     : "xmm0", "xmm1", "xmm2");
}

int main(void)
{
    static const double x0[N] = {0.37, 3.1, 1.25, 2.7, 0.5, -3.6, 0.9, 0.8};
    for (int i = 0; i < N; i++) {
        x[i] = x0[i];
        DG_INPUTF(x[i]);
    }
    double y[8];

    /* 0: a sum with a constant of the shifters' size. */
    y[0] = x[0] * 1e15 + 5e15;
    expect[0][0] = 1e15;

    /* 1: Horner's scheme ending in a large coefficient, and the same
     * constant taken off again (p(x) - p(0)): a sum with a number, not a
     * shifter, both times. */
    static volatile double c0 = 9.7e15;
    double poly = ((x[1] * 2.5 + 3e14) * x[1] - 7e14) * x[1] + 9.7e15;
    y[1] = poly + 1e-3 * ((x[1] * 1e15 + c0) - c0);
    expect[1][1] = 7.5 * x0[1] * x0[1] + 6e14 * x0[1] - 7e14 + 1e-3 * 1e15;

    /* 2: the rounding pair in doubles: x2 * rint(x3). */
    double c = shift52;
    double r3 = (x[3] + c) - c;
    y[2] = x[2] * r3;
    expect[2][2] = 3.0; /* rint(2.7) */
    expect[2][3] = 0.0;

    /* 3: floats: x4 * rint(x5) (the pair with 1.5*2^23), and a plain sum
     * with a constant in the float shifters' binade. */
    float cf = shift23;
    float f4 = (float)x[4], f5 = (float)x[5];
    float r5 = (f5 + cf) - cf;
    float plain = f4 * 1e6f + 1.2e7f;
    y[3] = (double)(f4 * r5) + (double)plain;
    expect[3][4] = -4.0 + 1e6; /* rint(-3.6) */
    expect[3][5] = 0.0;

    /* 4-6: vectorised loops: rounding pairs (derivative 0) and plain
     * sums with large constants (derivative 1), doubles and floats. */
    double a[K], rd[K], pd[K];
    float af[K], rf[K], pf[K];
    double slope = 0.0;
    for (int k = 0; k < K; k++) {
        a[k] = x[6] * ((k + 1) * 0.25);
        af[k] = (float)a[k];
        slope += (k + 1) * 0.25;
    }
    c = shift52;
    cf = shift23;
    for (int k = 0; k < K; k++) rd[k] = (a[k] + c) - c;
    for (int k = 0; k < K; k++) pd[k] = a[k] * 1e15 + 5e15;
    for (int k = 0; k < K; k++) rf[k] = (af[k] + cf) - cf;
    for (int k = 0; k < K; k++) pf[k] = af[k] * 1e3f + 1.2e7f;
    y[4] = 0.0;
    y[5] = 0.0;
    y[6] = 0.0;
    for (int k = 0; k < K; k++) {
        y[4] += rd[k] + a[k];
        y[5] += pd[k];
        y[6] += (double)rf[k] + (double)pf[k];
    }
    expect[4][6] = slope;
    expect[5][6] = 1e15 * slope;
    expect[6][6] = 1e3 * slope;

    /* 7: the rounding trick inside an FMA, packed, with an exponent-bias
     * shifter: n = fma(v, 16/ln 2, 1.5*2^48 + 1023), r = v - (n - shifter)
     * ln 2/16, dr/dv = 1; and a plain sum inside an FMA. */
    const double shifter = 1.5 * 281474976710656.0 + 1023.0;
    const double c1 = 16.0 / 0.693147180559945309417;
    double v[4], n[4], p;
    for (int j = 0; j < 4; j++) v[j] = x[7] * (j + 1);
    if (__builtin_cpu_supports("fma")) {
        fma_forms(v, c1, shifter, n, &p);
    } else {
        volatile double vc1 = c1, vs = shifter;
        for (int j = 0; j < 4; j++) n[j] = v[j] * vc1 + vs;
        p = v[0] * 1e15 + 5e15;
    }
    y[7] = 1e-15 * p;
    for (int j = 0; j < 4; j++) y[7] += v[j] - (n[j] - shifter) * (0.693147180559945309417 / 16.0);
    expect[7][7] = 1.0 + (1 + 2 + 3 + 4);

    for (int o = 0; o < 8; o++) {
        DG_OUTPUTF(y[o]);
        printf("y%d = %.9g\n", o, y[o]);
    }
    for (int o = 0; o < 8; o++) {
        for (int i = 0; i < N; i++) printf("expect %d %d %.17g\n", o, i, expect[o][i]);
    }
    printf("END rounding_pairs\n");
    return 0;
}
