/* Bitwise logic that takes a float apart (vectorised log kernels: numpy's
 * AVX2 float32 log, Eigen's frexp): `x & 0x007fffff` extracts the
 * significand bits (a subnormal, x scaled by 2^-126-e), `| 0x3f800000`
 * gives them the exponent of 1 (m in [1, 2), x / 2^e); with the sign kept
 * and the exponent of 1/2, m in [0.5, 1). Each is a scaling of x within
 * its binade, and the derivative is the scale. The exponent taken alone
 * (`psrld` by 23, `x & 0x7f800000`) is a staircase: derivative 0, and
 * nothing for dgad to report.
 *
 *     significand_masks float    the float forms (SSE2), whose derivatives
 *                                 the program prints (`expect OUTPUT INPUT d`,
 *                                 from frexpf): record_vector_rules checks them
 *     significand_masks double   the same on doubles: the scale of the
 *                                 extraction, 2^-1022-e, is beyond what the
 *                                 sweeps can carry, so dgad reports the
 *                                 instruction and records a constant (it
 *                                 once read the low 4 bytes as a float
 *                                 passing through unchanged: derivative 1)
 */
#include <emmintrin.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <valgrind/derivgrind.h>

#define N 8
static const float w[N] = {1, 2, 3, 4, 5, 6, 7, 8};

static double weigh(const float *v)
{
    double s = 0;
    for (int j = 0; j < N; j++) s += (double)v[j] * w[j];
    return s;
}

static int floats(void)
{
    static float x[N] = {3.3f, 0.37f, 1e-30f, 0.8f, 6.02e23f, 1.0f, 0.31f, 7.0f};
    static float xs[N] = {-3.3f, 0.37f, -1e-30f, 0.8f, -6.02e23f, -1.0f, 0.31f, -7.0f};
    for (int i = 0; i < N; i++) DG_INPUTF(x[i]);
    for (int i = 0; i < N; i++) DG_INPUTF(xs[i]);
    const __m128 mantissa = _mm_castsi128_ps(_mm_set1_epi32(0x007fffff));
    const __m128 exponent = _mm_castsi128_ps(_mm_set1_epi32(0x7f800000));
    float m[N], h[N];
    for (int j = 0; j < N; j += 4) {
        /* m = (x & mantissa) | 1.0: x / 2^(e-1) for frexp's e */
        __m128 v = _mm_loadu_ps(&x[j]);
        _mm_storeu_ps(&m[j], _mm_or_ps(_mm_and_ps(v, mantissa), _mm_set1_ps(1.0f)));
        /* h = (xs & ~exponent) | 0.5: xs / 2^e, sign kept (andnot form) */
        __m128 s = _mm_loadu_ps(&xs[j]);
        _mm_storeu_ps(&h[j], _mm_or_ps(_mm_andnot_ps(exponent, s), _mm_set1_ps(0.5f)));
    }
    /* Staircases, derivative 0 and nothing to report: the exponent as an
     * integer (`psrld` by 23, as log kernels take it) and as a power of
     * two (`x & 0x7f800000`); each added to x, whose derivative is 1. */
    float ex[N], p2[N];
    for (int j = 0; j < N; j += 4) {
        __m128 v = _mm_loadu_ps(&x[j]);
        __m128i e = _mm_sub_epi32(_mm_srli_epi32(_mm_castps_si128(v), 23), _mm_set1_epi32(127));
        _mm_storeu_ps(&ex[j], _mm_add_ps(_mm_cvtepi32_ps(e), v));
        _mm_storeu_ps(&p2[j], _mm_add_ps(_mm_and_ps(v, exponent), v));
    }
    double y[4] = {weigh(m), weigh(h), weigh(ex), weigh(p2)};
    for (int o = 0; o < 4; o++) {
        DG_OUTPUTF(y[o]);
        printf("y%d = %.9g\n", o, y[o]);
    }
    for (int i = 0; i < 2 * N; i++) {
        int e;
        double d0 = 0, d1 = 0;
        if (i < N) {
            frexpf(x[i], &e);
            d0 = w[i] * ldexp(1.0, 1 - e);
        } else {
            frexpf(xs[i - N], &e);
            d1 = w[i - N] * ldexp(1.0, -e);
        }
        printf("expect 0 %d %.17g\n", i, d0);
        printf("expect 1 %d %.17g\n", i, d1);
        printf("expect 2 %d %.17g\n", i, i < N ? (double)w[i] : 0.0);
        printf("expect 3 %d %.17g\n", i, i < N ? (double)w[i] : 0.0);
    }
    printf("END significand_masks\n");
    return 0;
}

static int doubles(void)
{
    static double x[2] = {3.3, 0.37};
    for (int i = 0; i < 2; i++) DG_INPUTF(x[i]);
    const __m128d mantissa = _mm_castsi128_pd(_mm_set1_epi64x(0x000fffffffffffffLL));
    double m[2];
    _mm_storeu_pd(m, _mm_or_pd(_mm_and_pd(_mm_loadu_pd(x), mantissa), _mm_set1_pd(1.0)));
    double y = m[0] + 2 * m[1];
    DG_OUTPUTF(y);
    printf("y = %.17g\n", y);
    printf("END significand_masks\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "float") == 0) return floats();
    if (argc == 2 && strcmp(argv[1], "double") == 0) return doubles();
    fprintf(stderr, "usage: significand_masks float|double\n");
    return 2;
}
