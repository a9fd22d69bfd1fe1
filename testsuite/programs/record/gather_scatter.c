/* Gathers and scatters of active values: every form compilers emit for
 * indexed loops (AVX2 `vgather*`/`vpgather*` with a vector mask; AVX-512
 * gathers with a `k` mask, scatters), with masked-off lanes, a qword-indexed
 * gather of dwords (upper half zeroed), colliding scatter indices (the
 * highest lane wins) and integer gathers of double bits.
 *
 * Inputs x[0..16) (double) and f[0..16) (float). Each output is a weighted
 * sum of what the vector code produced, so its gradient is known: the
 * program works it out again with scalar loops that follow the
 * instructions' documented semantics and prints it (`expect OUTPUT INPUT
 * d`), for the test to compare with the recorded tape's gradient.
 * `avx512f` in argv[1] runs the AVX-512 part as well (the test passes it
 * only on a CPU that has AVX-512). */
#include <immintrin.h>
#include <stdio.h>
#include <string.h>
#include <valgrind/derivgrind.h>

#define N 16
static double x[N];
static float f[N];
/* expect[o][i]: d output o / d input i (inputs 0..15 are x, 16..31 f). */
static double expect[8][2 * N];

__attribute__((target("avx2"))) static inline double dot4(__m256d v, const double w[4])
{
    double t[4];
    _mm256_storeu_pd(t, v);
    return t[0] * w[0] + t[1] * w[1] + t[2] * w[2] + t[3] * w[3];
}

__attribute__((target("avx2"))) static inline double dot8f(__m256 v, const double w[8])
{
    float t[8];
    _mm256_storeu_ps(t, v);
    double s = 0;
    for (int j = 0; j < 8; j++) s += t[j] * w[j];
    return s;
}

/* Output 0: AVX2 gathers of doubles (dword and qword indices, masked). */
__attribute__((target("avx2"))) static double avx2_doubles(void)
{
    static const double w[4] = {1, 3, 5, 7}, u[4] = {11, 13, 17, 19}, v[4] = {23, 29, 31, 37};
    const int idx[4] = {3, 0, 15, 3};
    const long long qidx[4] = {8, 2, 9, 14};
    __m128i i4 = _mm_loadu_si128((const __m128i *)idx);
    __m256i q4 = _mm256_loadu_si256((const __m256i *)qidx);
    double y = dot4(_mm256_i32gather_pd(x, i4, 8), w);
    for (int j = 0; j < 4; j++) expect[0][idx[j]] += w[j];
    /* lanes 1 and 3 enabled (sign bits); lanes 0 and 2 keep src = 2 x[j+4] */
    __m256d src = _mm256_mul_pd(_mm256_loadu_pd(x + 4), _mm256_set1_pd(2.0));
    __m256d mask = _mm256_castsi256_pd(_mm256_setr_epi64x(0, -1, 0, -1));
    y += dot4(_mm256_mask_i64gather_pd(src, x, q4, mask, 8), u);
    for (int j = 0; j < 4; j++) {
        if (j & 1) {
            expect[0][qidx[j]] += u[j];
        } else {
            expect[0][j + 4] += 2 * u[j];
        }
    }
    /* the bits of doubles gathered as integers */
    __m256i bits = _mm256_i32gather_epi64((const long long *)x, _mm_setr_epi32(6, 7, 1, 12), 8);
    y += dot4(_mm256_castsi256_pd(bits), v);
    const int bidx[4] = {6, 7, 1, 12};
    for (int j = 0; j < 4; j++) expect[0][bidx[j]] += v[j];
    return y;
}

/* Output 1: AVX2 gathers of floats (dword indices; qword indices fill half
 * the register and zero the rest). */
__attribute__((target("avx2"))) static double avx2_floats(void)
{
    static const double w[8] = {2, 4, 6, 8, 10, 12, 14, 16}, u[8] = {3, 5, 7, 9, 0, 0, 0, 0};
    const int idx[8] = {15, 14, 0, 1, 7, 7, 8, 2};
    __m256i i8 = _mm256_loadu_si256((const __m256i *)idx);
    double y = dot8f(_mm256_i32gather_ps(f, i8, 4), w);
    for (int j = 0; j < 8; j++) expect[1][N + idx[j]] += w[j];
    /* two qword indices: lanes 2 and 3 of the xmm result are zeroed */
    __m128 g = _mm_i64gather_ps(f, _mm_set_epi64x(11, 5), 4);
    float t[4];
    _mm_storeu_ps(t, g);
    y += t[0] * u[0] + t[1] * u[1] + t[2] * 1000.0 + t[3] * 1000.0;
    expect[1][N + 5] += u[0];
    expect[1][N + 11] += u[1];
    return y;
}

/* Outputs 2-4: AVX-512 gathers with k masks, scatters (one with colliding
 * indices), a masked qword-indexed scatter, a float scatter. */
__attribute__((target("avx512f"))) static void avx512_part(double *out2, double *out3, double *out4)
{
    static const double w[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    const int idx[8] = {9, 4, 4, 0, 13, 2, 11, 6};
    __m256i i8 = _mm256_loadu_si256((const __m256i *)idx);
    double t[8];
    /* merge-masked gather: lanes of k = 0b10110101 load, the others keep
     * src = 3 x[j+8] */
    __m512d src = _mm512_mul_pd(_mm512_loadu_pd(x + 8), _mm512_set1_pd(3.0));
    __m512d g = _mm512_mask_i32gather_pd(src, (__mmask8)0xb5, i8, x, 8);
    _mm512_storeu_pd(t, g);
    double y = 0;
    for (int j = 0; j < 8; j++) {
        y += t[j] * w[j];
        if (0xb5 & (1 << j)) {
            expect[2][idx[j]] += w[j];
        } else {
            expect[2][j + 8] += 3 * w[j];
        }
    }
    *out2 = y;

    /* scatter v_j = (j+1) x[j] to slots sidx[j]; slot 5 is written by lanes
     * 2 and 6, lane 6 wins */
    double slots[16];
    memset(slots, 0, sizeof slots);
    const int sidx[8] = {1, 3, 5, 7, 9, 11, 5, 15};
    __m512d v = _mm512_mul_pd(_mm512_loadu_pd(x), _mm512_setr_pd(1, 2, 3, 4, 5, 6, 7, 8));
    _mm512_i32scatter_pd(slots, _mm256_loadu_si256((const __m256i *)sidx), v, 8);
    /* a masked qword-indexed scatter into slots 0, 2, 4, ... of 10 x[j+8]:
     * k = 0b01011011 */
    const long long qidx[8] = {0, 2, 4, 6, 8, 10, 12, 14};
    __m512d v2 = _mm512_mul_pd(_mm512_loadu_pd(x + 8), _mm512_set1_pd(10.0));
    _mm512_mask_i64scatter_pd(slots, (__mmask8)0x5b, _mm512_loadu_si512(qidx), v2, 8);
    double writer[16];
    for (int s = 0; s < 16; s++) writer[s] = -1;
    for (int j = 0; j < 8; j++) writer[sidx[j]] = j; /* in lane order */
    y = 0;
    for (int s = 0; s < 16; s++) {
        y += slots[s] * (s + 1);
        if (s % 2 == 0 && (0x5b & (1 << (s / 2)))) {
            expect[3][8 + s / 2] += 10.0 * (s + 1);
        } else if (writer[s] >= 0) {
            int j = (int)writer[s];
            expect[3][j] += (j + 1) * (s + 1);
        }
    }
    *out3 = y;

    /* floats: a 16-lane scatter in reversed order */
    float fs[16];
    int fidx[16];
    for (int j = 0; j < 16; j++) fidx[j] = 15 - j;
    _mm512_i32scatter_ps(fs, _mm512_loadu_si512(fidx), _mm512_loadu_ps(f), 4);
    y = 0;
    for (int s = 0; s < 16; s++) {
        y += fs[s] * (s + 2);
        expect[4][N + (15 - s)] += s + 2;
    }
    *out4 = y;
}

int main(int argc, char **argv)
{
    int avx512 = argc > 1 && strcmp(argv[1], "avx512f") == 0;
    for (int i = 0; i < N; i++) {
        x[i] = 1.0 + 0.5 * i;
        f[i] = (float)(2.0 - 0.25 * i);
        DG_INPUTF(x[i]);
        DG_INPUTF(f[i]);
    }
    double y[5];
    int outputs = 2;
    y[0] = avx2_doubles();
    y[1] = avx2_floats();
    if (avx512) {
        avx512_part(&y[2], &y[3], &y[4]);
        outputs = 5;
    }
    for (int o = 0; o < outputs; o++) {
        DG_OUTPUTF(y[o]);
        printf("y%d = %.9g\n", o, y[o]);
    }
    /* inputs were declared interleaved: x0 f0 x1 f1 ... */
    for (int o = 0; o < outputs; o++) {
        for (int i = 0; i < N; i++) {
            printf("expect %d %d %.17g\n", o, 2 * i, expect[o][i]);
            printf("expect %d %d %.17g\n", o, 2 * i + 1, expect[o][N + i]);
        }
    }
    printf("END gather_scatter\n");
    return 0;
}
