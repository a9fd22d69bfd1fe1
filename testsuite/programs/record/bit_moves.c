/* Sign-bit tricks and moves done with integer instructions on the bits of
 * active values: `btr`/`btc`/`bts` of the sign bit (abs, negation,
 * negative abs; gcc -O2 compiles the memcpy-to-integer `fabs` idiom so),
 * on doubles in 64-bit registers and memory and on floats in 32-bit
 * registers; and `psrlq x, 32`, which brings the upper float of each
 * qword down (a move of whole index granules); float sign masks in all
 * lanes on a float whose neighbours are passive.
 *
 * Inputs x[0..8) (double). The program prints the gradient (`expect
 * OUTPUT INPUT d`) for testsuite/tests/record_vector_rules.rs. SSE2 only. */
#include <emmintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <valgrind/derivgrind.h>

#define N 8
static double x[N];
static double expect[4][N];

static double bit_fabs(double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    u &= ~(1ULL << 63);
    memcpy(&v, &u, 8);
    return v;
}

static double bit_neg(double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    u ^= 1ULL << 63;
    memcpy(&v, &u, 8);
    return v;
}

int main(void)
{
    static const double x0[N] = {3.3, -0.37, 12.5, 0.8, -5.75, 1.4, 0.31, -7.0};
    for (int i = 0; i < N; i++) {
        x[i] = x0[i];
        DG_INPUTF(x[i]);
    }
    double y[4];
    double sign[N];
    for (int i = 0; i < N; i++) sign[i] = x0[i] < 0 ? -1.0 : 1.0;

    /* 0: the C idioms (compiled to btr/btc at -O2, and/xor at -O0), and
     * explicit btr/btc/bts in a register and in memory. */
    double r[6];
    r[0] = bit_fabs(x[0]);
    r[1] = bit_neg(x[1]);
    double m = x[2], t;
    __asm__ volatile("btrq $63, %0" : "+m"(m));
    r[2] = m;
    __asm__ volatile("movq %1, %%rax\n\tbtcq $63, %%rax\n\tmovq %%rax, %0" : "=x"(t) : "x"(x[3]) : "rax");
    r[3] = t;
    __asm__ volatile("movq %1, %%rax\n\tbtsq $63, %%rax\n\tmovq %%rax, %0" : "=x"(t) : "x"(x[4]) : "rax");
    r[4] = t;
    m = x[5];
    __asm__ volatile("btcq $63, %0" : "+m"(m));
    r[5] = m;
    y[0] = r[0] + 2 * r[1] + 3 * r[2] + 4 * r[3] + 5 * r[4] + 6 * r[5];
    expect[0][0] = sign[0];
    expect[0][1] = -2;
    expect[0][2] = 3 * sign[2];
    expect[0][3] = -4;
    expect[0][4] = -5 * sign[4];
    expect[0][5] = -6;

    /* 1: floats in 32-bit registers: btr (abs) and btc (negation). */
    float f6 = (float)x[6], f7 = (float)x[7], g6, g7;
    __asm__ volatile("movd %1, %%eax\n\tbtrl $31, %%eax\n\tmovd %%eax, %0" : "=x"(g6) : "x"(f6) : "rax");
    __asm__ volatile("movd %1, %%eax\n\tbtcl $31, %%eax\n\tmovd %%eax, %0" : "=x"(g7) : "x"(f7) : "rax");
    y[1] = (double)g6 + 2.0 * (double)g7;
    expect[1][6] = sign[6];
    expect[1][7] = -2;

    /* 2: psrlq by 32 on float pairs: lane 2j takes float 2j + 1. */
    float f[4] = {(float)x[0], (float)x[1], (float)x[2], (float)x[3]}, g[4];
    __m128i v = _mm_loadu_si128((const __m128i *)f);
    _mm_storeu_si128((__m128i *)g, _mm_srli_epi64(v, 32));
    y[2] = (double)g[0] + 2.0 * (double)g[2];
    expect[2][1] = 1;
    expect[2][3] = 2;

    /* 3: clang's float sign masks, all four lanes {-0.f, ...} (or
     * 0x7fffffff), applied with orps/xorps/andps to a float loaded by
     * movss, whose upper lanes are passive zeros: the low 8 bytes then
     * also read as a small double, and for a negative float `orps` keeps
     * that double's magnitude while flipping its sign. -|x| of negative
     * x[1] is x[1] (+1), of positive x[0] is -x[0]; -x[7]; |x[4]|. */
    static const float minus0[4] __attribute__((aligned(16))) = {-0.f, -0.f, -0.f, -0.f};
    static const uint32_t absmask[4] __attribute__((aligned(16))) = {
        0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff};
    float h[4] = {(float)x[1], (float)x[0], (float)x[7], (float)x[4]}, k[4];
    __asm__ volatile("movss %1, %%xmm0\n\torps %2, %%xmm0\n\tmovss %%xmm0, %0"
                     : "=m"(k[0]) : "m"(h[0]), "m"(minus0) : "xmm0");
    __asm__ volatile("movss %1, %%xmm0\n\torps %2, %%xmm0\n\tmovss %%xmm0, %0"
                     : "=m"(k[1]) : "m"(h[1]), "m"(minus0) : "xmm0");
    __asm__ volatile("movss %1, %%xmm0\n\txorps %2, %%xmm0\n\tmovss %%xmm0, %0"
                     : "=m"(k[2]) : "m"(h[2]), "m"(minus0) : "xmm0");
    __asm__ volatile("movss %1, %%xmm0\n\tandps %2, %%xmm0\n\tmovss %%xmm0, %0"
                     : "=m"(k[3]) : "m"(h[3]), "m"(absmask) : "xmm0");
    y[3] = (double)k[0] + 2.0 * (double)k[1] + 3.0 * (double)k[2] + 4.0 * (double)k[3];
    expect[3][1] = -sign[1];
    expect[3][0] = -2 * sign[0];
    expect[3][7] = -3;
    expect[3][4] = 4 * sign[4];

    for (int o = 0; o < 4; o++) {
        DG_OUTPUTF(y[o]);
        printf("y%d = %.9g\n", o, y[o]);
    }
    for (int o = 0; o < 4; o++) {
        for (int i = 0; i < N; i++) printf("expect %d %d %.17g\n", o, i, expect[o][i]);
    }
    printf("END bit_moves\n");
    return 0;
}
