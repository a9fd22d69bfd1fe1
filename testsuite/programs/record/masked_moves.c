/* EVEX moves under a mask register (glibc's AVX-512 memcpy tails, numpy's
 * masked loop ends): masked stores of doubles, words and bytes over memory
 * that holds other active values, merging and zeroing masked loads, a
 * merging register move, in zmm and ymm widths. Elements the mask selects
 * take the source's values and derivatives; the others keep the
 * destination's (or become passive zeros under {z}).
 *
 * Inputs x[0..8) (double). Each output is a weighted sum of one result;
 * the program prints the gradient the masks give (`expect OUTPUT INPUT d`)
 * for testsuite/tests/record_vector_rules.rs, which checks the tape in both
 * directions and dot mode's tangents against it. With the argument
 * `torn`, a byte mask that selects two bytes of a double instead: a value
 * taken apart, which dgad must report. Needs AVX-512F, BW, VL. */
#include <stdio.h>
#include <valgrind/derivgrind.h>

#define N 8
static double x[N];
static double expect[7][N];
static const double w[N] = {1, 2, 3, 4, 5, 6, 7, 8};

static double weigh(const double *v)
{
    double s = 0;
    for (int j = 0; j < N; j++) s += v[j] * w[j];
    return s;
}

/* mask bit j of `m` (element j). */
static int bit(unsigned long m, int j) { return (m >> j) & 1; }

__attribute__((target("avx512f,avx512bw,avx512vl"))) int main(int argc, char **argv)
{
    static const double x0[N] = {3.3, -0.37, 12.5, 0.8, -5.75, 1.4, 0.31, 7.0};
    for (int i = 0; i < N; i++) {
        x[i] = x0[i];
        DG_INPUTF(x[i]);
    }
    double y[7];
    double a[N], b[N];
    for (int j = 0; j < N; j++) {
        a[j] = 3.0 * x[j]; /* what masked stores leave in place: d = 3 */
        b[j] = x[j] * x[j]; /* d = 2x */
    }

    if (argc > 1) {
        /* Two bytes of x[0]'s index over a double with a large index (past
         * 2^16 blocks): a granule that names neither, reported. */
        volatile double acc = 0;
        for (int k = 0; k < 70000; k++) acc = acc * 0.5 + x[1];
        double d[N];
        for (int j = 0; j < N; j++) d[j] = 3.0 * x[j] + acc;
        __asm__ volatile("kmovq %[m], %%k1\n\t"
                         "vmovdqu8 %[x], %%zmm0\n\t"
                         "vmovdqu8 %%zmm0, %[d]%{%%k1%}"
                         : [d] "+m"(d)
                         : [x] "m"(x), [m] "r"(0x3UL)
                         : "k1", "xmm0", "memory");
        double t = weigh(d);
        DG_OUTPUTF(t);
        printf("torn %.17g\n", t);
        printf("END masked_moves\n");
        return 0;
    }
    /* 0: vmovupd [a]{k}, zmm(x): selected lanes x (d 1), others 3x. */
    {
        double d[N];
        for (int j = 0; j < N; j++) d[j] = a[j];
        const unsigned long m = 0xb5;
        __asm__ volatile("kmovw %[m], %%k1\n\t"
                         "vmovupd %[x], %%zmm0\n\t"
                         "vmovupd %%zmm0, %[d]%{%%k1%}"
                         : [d] "+m"(d)
                         : [x] "m"(x), [m] "r"((unsigned)m)
                         : "k1", "xmm0", "memory");
        y[0] = weigh(d);
        for (int j = 0; j < N; j++) expect[0][j] = w[j] * (bit(m, j) ? 1.0 : 3.0);
    }
    /* 1: vmovupd zmm{k}{z}, [b]: selected lanes x^2 (d 2x), others 0. */
    {
        double d[N];
        const unsigned long m = 0x5b;
        __asm__ volatile("kmovw %[m], %%k2\n\t"
                         "vmovupd %[b], %%zmm1%{%%k2%}%{z%}\n\t"
                         "vmovupd %%zmm1, %[d]"
                         : [d] "=m"(d)
                         : [b] "m"(b), [m] "r"((unsigned)m)
                         : "k2", "xmm1", "memory");
        y[1] = weigh(d);
        for (int j = 0; j < N; j++) expect[1][j] = w[j] * (bit(m, j) ? 2.0 * x0[j] : 0.0);
    }
    /* 2: vmovupd zmm(a){k}, [b] merging: x^2 where selected, 3x elsewhere. */
    {
        double d[N];
        const unsigned long m = 0xc6;
        __asm__ volatile("kmovw %[m], %%k3\n\t"
                         "vmovupd %[a], %%zmm2\n\t"
                         "vmovupd %[b], %%zmm2%{%%k3%}\n\t"
                         "vmovupd %%zmm2, %[d]"
                         : [d] "=m"(d)
                         : [a] "m"(a), [b] "m"(b), [m] "r"((unsigned)m)
                         : "k3", "xmm2", "memory");
        y[2] = weigh(d);
        for (int j = 0; j < N; j++) expect[2][j] = w[j] * (bit(m, j) ? 2.0 * x0[j] : 3.0);
    }
    /* 3: vmovapd zmm3{k}, zmm4 (register move, merging): b where selected,
     * a elsewhere. */
    {
        double d[N];
        const unsigned long m = 0x39;
        __asm__ volatile("kmovw %[m], %%k4\n\t"
                         "vmovupd %[a], %%zmm3\n\t"
                         "vmovupd %[b], %%zmm4\n\t"
                         "vmovapd %%zmm4, %%zmm3%{%%k4%}\n\t"
                         "vmovupd %%zmm3, %[d]"
                         : [d] "=m"(d)
                         : [a] "m"(a), [b] "m"(b), [m] "r"((unsigned)m)
                         : "k4", "xmm3", "xmm4", "memory");
        y[3] = weigh(d);
        for (int j = 0; j < N; j++) expect[3][j] = w[j] * (bit(m, j) ? 2.0 * x0[j] : 3.0);
    }
    /* 4: vmovdqu8 [a]{k}, zmm(x) with whole doubles' bytes selected (a
     * memcpy tail's byte mask): doubles 0, 2, 3 and 6 from x. */
    {
        double d[N];
        for (int j = 0; j < N; j++) d[j] = a[j];
        const unsigned long m = 0x00ff0000ffff00ffUL;
        __asm__ volatile("kmovq %[m], %%k5\n\t"
                         "vmovdqu8 %[x], %%zmm5\n\t"
                         "vmovdqu8 %%zmm5, %[d]%{%%k5%}"
                         : [d] "+m"(d)
                         : [x] "m"(x), [m] "r"(m)
                         : "k5", "xmm5", "memory");
        y[4] = weigh(d);
        for (int j = 0; j < N; j++) expect[4][j] = w[j] * (bit(m, 8 * j) ? 1.0 : 3.0);
    }
    /* 5: vmovdqu64 ymm{k}{z}, [b] then a 256-bit masked store: the upper
     * four doubles of d stay 3x. */
    {
        double d[N];
        for (int j = 0; j < N; j++) d[j] = a[j];
        const unsigned long m = 0x6;
        __asm__ volatile("kmovw %[m], %%k6\n\t"
                         "vmovdqu64 %[b], %%ymm6%{%%k6%}%{z%}\n\t"
                         "kmovw %[all], %%k6\n\t"
                         "vmovdqu64 %%ymm6, %[d]%{%%k6%}"
                         : [d] "+m"(d)
                         : [b] "m"(b), [m] "r"((unsigned)m), [all] "r"(0xfu)
                         : "k6", "xmm6", "memory");
        y[5] = weigh(d);
        for (int j = 0; j < N; j++)
            expect[5][j] = w[j] * (j >= 4 ? 3.0 : bit(m, j) ? 2.0 * x0[j] : 0.0);
    }
    /* 6: vmovdqu16 merging load of words: whole doubles 1 and 7 from b
     * (four words each) into a register holding a. */
    {
        double d[N];
        const unsigned long m = 0xf00000f0UL;
        __asm__ volatile("kmovd %k[m], %%k7\n\t"
                         "vmovupd %[a], %%zmm7\n\t"
                         "vmovdqu16 %[b], %%zmm7%{%%k7%}\n\t"
                         "vmovupd %%zmm7, %[d]"
                         : [d] "=m"(d)
                         : [a] "m"(a), [b] "m"(b), [m] "r"(m)
                         : "k7", "xmm7", "memory");
        y[6] = weigh(d);
        for (int j = 0; j < N; j++) expect[6][j] = w[j] * (bit(m, 4 * j) ? 2.0 * x0[j] : 3.0);
    }

    for (int o = 0; o < 7; o++) {
        DG_OUTPUTF(y[o]);
        printf("y%d = %.9g\n", o, y[o]);
    }
    for (int o = 0; o < 7; o++)
        for (int i = 0; i < N; i++) printf("expect %d %d %.17g\n", o, i, expect[o][i]);
    printf("END masked_moves\n");
    return 0;
}
