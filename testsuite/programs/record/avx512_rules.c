/* Derivative rules of AVX-512 instructions vectorised math kernels use
 * (numpy's SVML, libmvec): vgetmant, vgetexp, vreduce, vscalef; the
 * rounding trick inside an FMA, with a shifter that keeps fraction bits
 * and carries an exponent bias; merge masking of instructions whose
 * result is a constant (the masked zero idiom, integer arithmetic), whose
 * masked-off lanes keep their values and derivatives; and sign tricks
 * (negation, abs) under a mask, whose bits cover 8-byte elements; and
 * integer addition of k<<52 (k<<23) to a double's (float's) bits, a
 * scaling by 2^k as exp kernels apply it; and masked stores of constants
 * into active memory, which leave the elements their mask clears alone;
 * vrange (min, max, by magnitude, with each sign control); sign tricks
 * on float lanes with a {1to8} dword broadcast mask (gcc's copysignf);
 * `vprolq` by 32 and `vpmovqd` moving floats between halves of qwords.
 *
 * Inputs x[0..8) (double). Each output is a weighted sum; the program
 * prints the gradient the instructions' definitions give (`expect OUTPUT
 * INPUT d`), worked out with scalar code, for the test to compare with the
 * recorded tape's (testsuite/tests/record_vector_rules.rs). Needs AVX-512F
 * and DQ. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <valgrind/derivgrind.h>

#define N 8
static double x[N];
static double expect[10][N];
static const double w[N] = {1, 2, 3, 4, 5, 6, 7, 8};

static double weigh(const double *v)
{
    double s = 0;
    for (int j = 0; j < N; j++) s += v[j] * w[j];
    return s;
}

__attribute__((target("avx512f,avx512dq"))) int main(void)
{
    static const double x0[N] = {3.3, -0.37, 12.5, 0.8, -5.75, 1.4, 0.31, 7.0};
    for (int i = 0; i < N; i++) {
        x[i] = x0[i];
        DG_INPUTF(x[i]);
    }
    double y[10], v[N];

    /* 0: `vxorpd v{k}, t, t` zeroes lanes 0-3 only; `vpaddq v{k}, c, c`
     * (integer arithmetic on constants) writes lanes 1, 2, 4 only. */
    memcpy(v, x, sizeof v);
    __asm__ volatile("vmovupd %[v], %%zmm0\n\t"
                     "vmovupd %[v], %%zmm1\n\t"
                     "movl $0x0f, %%eax\n\t"
                     "kmovw %%eax, %%k1\n\t"
                     "vxorpd %%zmm1, %%zmm1, %%zmm0%{%%k1%}\n\t"
                     "movl $0x16, %%eax\n\t"
                     "kmovw %%eax, %%k2\n\t"
                     "vpbroadcastq %[c], %%zmm2\n\t"
                     "vpaddq %%zmm2, %%zmm2, %%zmm0%{%%k2%}\n\t"
                     "vmovupd %%zmm0, %[v]\n\t"
                     : [v] "+m"(v)
                     : [c] "m"((long long){1LL << 52})
                     : "rax", "xmm0", "xmm1", "xmm2", "k1", "k2");
    y[0] = weigh(v);
    for (int j = 0; j < N; j++) {
        if (!(0x0f & (1 << j)) && !(0x16 & (1 << j))) expect[0][j] += w[j];
    }

    /* 1: vgetmantpd with the four intervals (sign from the source) and
     * sign control 0: m = x / 2^k, dm/dx = 2^-k (worked out by frexp). */
    double s1 = 0;
    static const int imms[5] = {0, 1, 2, 3, 4};
    for (int c = 0; c < 5; c++) {
        memcpy(v, x, sizeof v);
        switch (imms[c]) {
        case 0: __asm__ volatile("vgetmantpd $0, %0, %%zmm0\n\tvmovupd %%zmm0, %0" : "+m"(v) : : "xmm0"); break;
        case 1: __asm__ volatile("vgetmantpd $1, %0, %%zmm0\n\tvmovupd %%zmm0, %0" : "+m"(v) : : "xmm0"); break;
        case 2: __asm__ volatile("vgetmantpd $2, %0, %%zmm0\n\tvmovupd %%zmm0, %0" : "+m"(v) : : "xmm0"); break;
        case 3: __asm__ volatile("vgetmantpd $3, %0, %%zmm0\n\tvmovupd %%zmm0, %0" : "+m"(v) : : "xmm0"); break;
        case 4: __asm__ volatile("vgetmantpd $4, %0, %%zmm0\n\tvmovupd %%zmm0, %0" : "+m"(v) : : "xmm0"); break;
        }
        s1 += weigh(v) * (c + 1);
        for (int j = 0; j < N; j++) {
            /* |x| = s 2^q with s in [1, 2) (q = e - 1 for frexp's e): the
             * interval [1, 2) gives s, [1/2, 1) gives s/2, [1/2, 2) gives
             * s/2 when q is odd, [3/4, 3/2) gives s/2 when s >= 3/2. */
            int e;
            frexp(x0[j], &e);
            int q = e - 1;
            double s_ = fabs(x0[j]) / ldexp(1.0, q);
            int halve;
            switch (imms[c] & 3) {
            case 0: halve = 0; break;
            case 1: halve = q & 1; break;
            case 2: halve = 1; break;
            default: halve = s_ >= 1.5; break;
            }
            double scale = ldexp(1.0, -q - halve);
            /* sign control 01b (imm 4): the result is |m| */
            double sign = (imms[c] & 4) && x0[j] < 0 ? -1.0 : 1.0;
            expect[1][j] += w[j] * (c + 1) * scale * sign;
        }
    }
    y[1] = s1;

    /* 2: vgetexppd (a staircase: 0), vreducepd keeping 2 fraction bits
     * (x - round(4x)/4: 1), vscalefpd by 3.5 (x 2^3: 8). */
    double a[N], b[N], c[N];
    memcpy(a, x, sizeof a);
    memcpy(b, x, sizeof b);
    memcpy(c, x, sizeof c);
    __asm__ volatile("vgetexppd %0, %%zmm0\n\tvmovupd %%zmm0, %0" : "+m"(a) : : "xmm0");
    __asm__ volatile("vreducepd $0x20, %0, %%zmm0\n\tvmovupd %%zmm0, %0" : "+m"(b) : : "xmm0");
    __asm__ volatile("vbroadcastsd %1, %%zmm1\n\t"
                     "vmovupd %0, %%zmm2\n\t"
                     "vscalefpd %%zmm1, %%zmm2, %%zmm0\n\tvmovupd %%zmm0, %0"
                     : "+m"(c)
                     : "m"((double){3.5})
                     : "xmm0", "xmm1", "xmm2");
    y[2] = weigh(a) + 2 * weigh(b) + 3 * weigh(c);
    for (int j = 0; j < N; j++) expect[2][j] = w[j] * (2 * 1.0 + 3 * 8.0);

    /* 3: the rounding trick in an FMA, as exp kernels do:
     * n = fma(x, 16/ln 2, 1.5*2^48 + 1023) keeps 4 fraction bits and the
     * bias; r = x - (n - shifter) ln 2 / 16 is x's reduced argument: dr/dx
     * = 1, the staircase n has derivative 0. */
    const double shifter = 1.5 * 281474976710656.0 + 1023.0;
    const double c1 = 16.0 / 0.693147180559945309417;
    double r[N];
    for (int j = 0; j < N; j++) {
        double n;
        __asm__ volatile("vmovsd %1, %%xmm0\n\t"
                         "vmovsd %2, %%xmm1\n\t"
                         "vfmadd213sd %3, %%xmm1, %%xmm0\n\t"
                         "vmovsd %%xmm0, %0"
                         : "=m"(n)
                         : "m"(x[j]), "m"(c1), "m"(shifter)
                         : "xmm0", "xmm1");
        r[j] = x[j] - (n - shifter) * (0.693147180559945309417 / 16.0);
    }
    y[3] = weigh(r);
    for (int j = 0; j < N; j++) expect[3][j] = w[j];

    /* 4: `vxorpd v{k=0x0f}, v, -0.0` negates lanes 0-3; then
     * `vandnpd v{k=0xf0}, -0.0, v` takes the absolute value of lanes 4-7. */
    memcpy(v, x, sizeof v);
    __asm__ volatile("vmovupd %[v], %%zmm0\n\t"
                     "vbroadcastsd %[sign], %%zmm1\n\t"
                     "movl $0x0f, %%eax\n\t"
                     "kmovw %%eax, %%k1\n\t"
                     "vxorpd %%zmm1, %%zmm0, %%zmm0%{%%k1%}\n\t"
                     "movl $0xf0, %%eax\n\t"
                     "kmovw %%eax, %%k2\n\t"
                     "vandnpd %%zmm0, %%zmm1, %%zmm0%{%%k2%}\n\t"
                     "vmovupd %%zmm0, %[v]\n\t"
                     : [v] "+m"(v)
                     : [sign] "m"((double){-0.0})
                     : "rax", "xmm0", "xmm1", "k1", "k2");
    y[4] = weigh(v);
    for (int j = 0; j < N; j++) {
        expect[4][j] = w[j] * (j < 4 ? -1.0 : (x0[j] < 0 ? -1.0 : 1.0));
    }

    /* 5: exponent arithmetic: `vpaddq` of 3<<52 (x 8), legacy `psubq` of
     * 2<<52 (x 1/4), and on floats `vpaddd` of 5<<23 (x 32); conversions
     * to float and back (x 1). */
    memcpy(a, x, sizeof a);
    memcpy(b, x, sizeof b);
    __asm__ volatile("vpbroadcastq %1, %%zmm1\n\t"
                     "vpaddq %0, %%zmm1, %%zmm0\n\t"
                     "vmovupd %%zmm0, %0"
                     : "+m"(a)
                     : "m"((long long){3LL << 52})
                     : "xmm0", "xmm1");
    for (int j = 0; j < N; j += 2) {
        __asm__ volatile("movupd %0, %%xmm0\n\t"
                         "movq %1, %%xmm1\n\t"
                         "punpcklqdq %%xmm1, %%xmm1\n\t"
                         "psubq %%xmm1, %%xmm0\n\t"
                         "movupd %%xmm0, %0"
                         : "+m"(*(double(*)[2])&b[j])
                         : "m"((long long){2LL << 52})
                         : "xmm0", "xmm1");
    }
    __asm__ volatile("vcvtpd2ps %1, %%ymm0\n\t"
                     "vpbroadcastd %2, %%ymm1\n\t"
                     "vpaddd %%ymm1, %%ymm0, %%ymm0\n\t"
                     "vcvtps2pd %%ymm0, %%zmm0\n\t"
                     "vmovupd %%zmm0, %0"
                     : "=m"(c)
                     : "m"(x), "m"((int){5 << 23})
                     : "xmm0", "xmm1");
    /* Narrowing from memory: `vcvtpd2ps ymm, m512` above converts 8 lanes,
     * `vcvtpd2ps xmm, m256` here 4 (the destination does not tell). */
    double d[N];
    for (int j = 0; j < N; j += 4) {
        __asm__ volatile("vcvtpd2psy %1, %%xmm0\n\t"
                         "vcvtps2pd %%xmm0, %%ymm0\n\t"
                         "vmovupd %%ymm0, %0"
                         : "=m"(*(double(*)[4])&d[j])
                         : "m"(*(double(*)[4])&x[j])
                         : "xmm0");
    }
    y[5] = weigh(a) + 2 * weigh(b) + 3 * weigh(c) + 4 * weigh(d);
    for (int j = 0; j < N; j++) expect[5][j] = w[j] * (8.0 + 2 * 0.25 + 3 * 32.0 + 4.0);

    /* 6: masked stores of constants over active values: `vmovupd m{k}`
     * with k = 0x03 zeroes a[0], a[1] only; `vpmovqd m{k}` with k = 0x01
     * writes the first 4 bytes of b[0] only (its value becomes a constant;
     * b[1..3] keep theirs). */
    memcpy(a, x, sizeof a);
    memcpy(b, x, sizeof b);
    static const double zeros[N];
    static const long long qs[N] = {7, 7, 7, 7, 7, 7, 7, 7};
    __asm__ volatile("vmovupd %1, %%zmm1\n\t"
                     "movl $3, %%eax\n\t"
                     "kmovw %%eax, %%k1\n\t"
                     "vmovupd %%zmm1, %0%{%%k1%}"
                     : "+m"(a)
                     : "m"(zeros)
                     : "rax", "xmm1", "k1");
    __asm__ volatile("vmovdqu64 %1, %%zmm1\n\t"
                     "movl $1, %%eax\n\t"
                     "kmovw %%eax, %%k1\n\t"
                     "vpmovqd %%zmm1, %0%{%%k1%}"
                     : "+m"(*(double(*)[4])b)
                     : "m"(qs)
                     : "rax", "xmm1", "k1");
    y[6] = weigh(a) + 2 * weigh(b);
    for (int j = 0; j < N; j++) expect[6][j] = w[j] * ((j >= 2) + 2.0 * (j >= 1));

    /* 7: vrangepd of x and 2 - x (both active: d(2 - x)/dx = -1) with
     * each selection (imm bits 1:0: min, max, min and max magnitude) and
     * each sign control (bits 3:2: from the first operand, from the one
     * picked, cleared, set); the derivative is worked out from the values:
     * the operand picked, times the sign the result gives it. */
    double s7 = 0;
    for (int imm = 0; imm < 16; imm++) {
        double o7[N], m[N];
        for (int j = 0; j < N; j++) m[j] = 2.0 - x[j];
        switch (imm) {
#define RANGE(i) case i: __asm__ volatile("vmovupd %1, %%zmm1\n\tvmovupd %2, %%zmm2\n\t" \
                                          "vrangepd $" #i ", %%zmm2, %%zmm1, %%zmm0\n\tvmovupd %%zmm0, %0" \
                                          : "=m"(o7) : "m"(x), "m"(m) : "xmm0", "xmm1", "xmm2"); break;
        RANGE(0) RANGE(1) RANGE(2) RANGE(3) RANGE(4) RANGE(5) RANGE(6) RANGE(7)
        RANGE(8) RANGE(9) RANGE(10) RANGE(11) RANGE(12) RANGE(13) RANGE(14) RANGE(15)
#undef RANGE
        }
        s7 += weigh(o7) * (imm + 1);
        for (int j = 0; j < N; j++) {
            double a7 = x0[j], b7 = 2.0 - x0[j];
            int pick_a;
            switch (imm & 3) {
            case 0: pick_a = a7 <= b7; break;
            case 1: pick_a = a7 > b7; break;
            case 2: pick_a = fabs(a7) <= fabs(b7); break;
            default: pick_a = fabs(a7) > fabs(b7); break;
            }
            double picked = pick_a ? a7 : b7;
            double sign_r;
            switch (imm >> 2) {
            case 0: sign_r = signbit(a7) ? -1 : 1; break;
            case 1: sign_r = signbit(picked) ? -1 : 1; break;
            case 2: sign_r = 1; break;
            default: sign_r = -1; break;
            }
            double d = sign_r * (signbit(picked) ? -1 : 1) * (pick_a ? 1.0 : -1.0);
            expect[7][j] += w[j] * (imm + 1) * d;
        }
    }
    y[7] = s7;

    /* 8: float lanes, masks as dword broadcasts: `vxorps ymm, ymm,
     * [-0.0f]{1to8}` negates every lane, and `vpternlogd s, f,
     * [0x80000000]{1to8}, 0xe4` (mask ? s : f bitwise, i.e. copysign(f,
     * s), as gcc vectorises copysignf) takes the signs of s. */
    {
        static const float s8[N] = {1, -1, -1, 1, 1, -1, 1, -1};
        float neg[N], cs[N];
        __asm__ volatile("vcvtpd2ps %2, %%ymm2\n\t"
                         "vxorps %3%{1to8%}, %%ymm2, %%ymm1\n\t"
                         "vmovups %%ymm1, %0\n\t"
                         "vmovups %4, %%ymm0\n\t"
                         "vpternlogd $0xe4, %5%{1to8%}, %%ymm2, %%ymm0\n\t"
                         "vmovups %%ymm0, %1"
                         : "=m"(neg), "=m"(cs)
                         : "m"(x), "m"((float){-0.0f}), "m"(s8), "m"((int){(int)0x80000000})
                         : "xmm0", "xmm1", "xmm2");
        double sum = 0;
        for (int j = 0; j < N; j++) {
            sum += w[j] * ((double)neg[j] + 2.0 * (double)cs[j]);
            double sign_f = x0[j] < 0 ? -1.0 : 1.0;
            expect[8][j] = w[j] * (-1.0 + 2.0 * sign_f * s8[j]);
        }
        y[8] = sum;
    }

    /* 9: x as floats, pairs swapped by `vprolq $32`, then the low float of
     * each qword kept by `vpmovqd`: lane j of the result is float 2j + 1. */
    {
        float sw[N], lo[N / 2];
        __asm__ volatile("vcvtpd2ps %2, %%ymm0\n\t"
                         "vprolq $32, %%ymm0, %%ymm1\n\t"
                         "vmovups %%ymm1, %0\n\t"
                         "vpmovqd %%ymm1, %%xmm2\n\t"
                         "vmovups %%xmm2, %1"
                         : "=m"(sw), "=m"(lo)
                         : "m"(x)
                         : "xmm0", "xmm1", "xmm2");
        double sum = 0;
        for (int j = 0; j < N; j++) {
            sum += w[j] * (double)sw[j];
            expect[9][j ^ 1] += w[j];
        }
        for (int j = 0; j < N / 2; j++) {
            sum += 10.0 * w[j] * (double)lo[j];
            expect[9][2 * j + 1] += 10.0 * w[j];
        }
        y[9] = sum;
    }

    for (int o = 0; o < 10; o++) {
        DG_OUTPUTF(y[o]);
        printf("y%d = %.9g\n", o, y[o]);
    }
    for (int o = 0; o < 10; o++) {
        for (int i = 0; i < N; i++) printf("expect %d %d %.17g\n", o, i, expect[o][i]);
    }
    printf("END avx512_rules\n");
    return 0;
}
