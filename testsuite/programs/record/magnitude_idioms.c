/* Sign-clearing idioms done with integer instructions (issue 16, point 3):
 * `shl r, 1; shr r, 1` and `add r, r; shr r, 1` on a double in a 64-bit
 * register and on a float in a 32-bit one, `andn` with the sign mask
 * (BMI1), and the vector pairs `psllq x, 1; psrlq x, 1` (doubles),
 * `pslld x, 1; psrld x, 1` (floats) and `vpsllq y, x, 1; vpsrlq z, y, 1`.
 * Each is fabs: derivative sign(x). Before, the general-register forms
 * gave derivative 0 silently and the vector ones a reported constant.
 *
 * Inputs x[0..8) (double), of both signs. The program prints the
 * gradient (`expect OUTPUT INPUT d`) for
 * testsuite/tests/record_vector_rules.rs. SSE2; `andn` and the VEX pair
 * where the CPU has BMI1 and AVX (else `and` and the legacy pair, whose
 * derivatives are the same). */
#include <stdio.h>
#include <valgrind/derivgrind.h>

#define N 8
static double x[N];
static double expect[3][N];

__attribute__((target("bmi"))) static double andn_abs(double v)
{
    double t;
    __asm__ volatile("movq %1, %%rax\n\t"
                     "movabsq $0x8000000000000000, %%rcx\n\t"
                     "andnq %%rax, %%rcx, %%rax\n\t"
                     "movq %%rax, %0"
                     : "=x"(t)
                     : "x"(v)
                     : "rax", "rcx");
    return t;
}

static double and_abs(double v)
{
    double t;
    __asm__ volatile("movq %1, %%rax\n\t"
                     "movabsq $0x7fffffffffffffff, %%rcx\n\t"
                     "andq %%rcx, %%rax\n\t"
                     "movq %%rax, %0"
                     : "=x"(t)
                     : "x"(v)
                     : "rax", "rcx");
    return t;
}

__attribute__((target("avx"))) static void vex_abs(const double *v, double *out)
{
    __asm__ volatile("vmovupd %1, %%xmm1\n\t"
                     "vpsllq $1, %%xmm1, %%xmm2\n\t"
                     "vpsrlq $1, %%xmm2, %%xmm3\n\t"
                     "vmovupd %%xmm3, %0"
                     : "=m"(*(double(*)[2])out)
                     : "m"(*(const double(*)[2])v)
                     : "xmm1", "xmm2", "xmm3");
}

static void legacy_abs(const double *v, double *out)
{
    __asm__ volatile("movupd %1, %%xmm0\n\t"
                     "psllq $1, %%xmm0\n\t"
                     "psrlq $1, %%xmm0\n\t"
                     "movupd %%xmm0, %0"
                     : "=m"(*(double(*)[2])out)
                     : "m"(*(const double(*)[2])v)
                     : "xmm0");
}

int main(void)
{
    static const double x0[N] = {-1.25, 0.75, -2.5, 3.0, -0.375, 1.5, -4.25, 0.625};
    for (int i = 0; i < N; i++) {
        x[i] = x0[i];
        DG_INPUTF(x[i]);
    }
    double sign[N];
    for (int i = 0; i < N; i++) sign[i] = x0[i] < 0 ? -1.0 : 1.0;
    double y[3];
    double t, r[4];

    /* 0: general registers. shl/shr and add/shr on doubles, shl/shr on a
     * float, andn. */
    __asm__ volatile("movq %1, %%rax\n\tshlq $1, %%rax\n\tshrq $1, %%rax\n\tmovq %%rax, %0"
                     : "=x"(t)
                     : "x"(x[0])
                     : "rax");
    r[0] = t;
    __asm__ volatile("movq %1, %%rax\n\taddq %%rax, %%rax\n\tshrq $1, %%rax\n\tmovq %%rax, %0"
                     : "=x"(t)
                     : "x"(x[1])
                     : "rax");
    r[1] = t;
    float f = (float)x[2], g;
    __asm__ volatile("movl %1, %%eax\n\tshll $1, %%eax\n\tshrl $1, %%eax\n\tmovl %%eax, %0"
                     : "=m"(g)
                     : "m"(f)
                     : "rax");
    r[2] = g;
    r[3] = __builtin_cpu_supports("bmi") ? andn_abs(x[3]) : and_abs(x[3]);
    y[0] = r[0] + 2 * r[1] + 3 * r[2] + 4 * r[3];
    expect[0][0] = sign[0];
    expect[0][1] = 2 * sign[1];
    expect[0][2] = 3 * sign[2];
    expect[0][3] = 4 * sign[3];

    /* 1: psllq/psrlq by 1 on two doubles; pslld/psrld by 1 on floats. */
    double out[2];
    legacy_abs(&x[4], out);
    float fv[4] = {(float)x[6], (float)x[7], 0.0f, 0.0f}, fo[4];
    __asm__ volatile("movups %1, %%xmm0\n\t"
                     "pslld $1, %%xmm0\n\t"
                     "psrld $1, %%xmm0\n\t"
                     "movups %%xmm0, %0"
                     : "=m"(fo)
                     : "m"(fv)
                     : "xmm0");
    y[1] = out[0] + 2 * out[1] + 3 * (double)fo[0] + 4 * (double)fo[1];
    expect[1][4] = sign[4];
    expect[1][5] = 2 * sign[5];
    expect[1][6] = 3 * sign[6];
    expect[1][7] = 4 * sign[7];

    /* 2: the VEX pair with three registers. */
    if (__builtin_cpu_supports("avx"))
        vex_abs(&x[0], out);
    else
        legacy_abs(&x[0], out);
    y[2] = out[0] + 2 * out[1];
    expect[2][0] = sign[0];
    expect[2][1] = 2 * sign[1];

    for (int o = 0; o < 3; o++) {
        DG_OUTPUTF(y[o]);
        printf("y%d = %.9g\n", o, y[o]);
    }
    for (int o = 0; o < 3; o++) {
        for (int i = 0; i < N; i++) printf("expect %d %d %.17g\n", o, i, expect[o][i]);
    }
    printf("END magnitude_idioms\n");
    return 0;
}
