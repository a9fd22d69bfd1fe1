/* FFTW3 cases (link: -lfftw3f -lfftw3 -lm). Every transform is linear, so
 * the Jacobian is exact and known: the reference writes every entry with
 * dt_ref (cos/sin of 2*pi*m/N with m = j*k reduced mod N, in long double,
 * exact at multiples of N/4), including 0 for the size parameters.
 *
 * Input: the size(s) first (integer parameters, fixed in cases.py), then the
 * signal: real values, or complex values interleaved (re, im, re, im, ...).
 * Output: the transform's values, complex ones interleaved.
 *   dft_fwd, dft_bwd  fftw_plan_dft_1d, n = x[0]; 2n in, 2n out (unnormalised)
 *   dft2d_fwd         fftw_plan_dft_2d, n0 = x[0], n1 = x[1] (row major)
 *   r2c               fftw_plan_dft_r2c_1d: n real in, n/2+1 complex out
 *   c2r               fftw_plan_dft_c2r_1d: n/2+1 complex in, n real out;
 *                     FFTW ignores Im X_0 (and Im X_{n/2}, n even): partial 0
 *   redft10, redft01  fftw_plan_r2r_1d DCT-II, DCT-III
 *   r2hc              fftw_plan_r2r_1d FFTW_R2HC (halfcomplex r0 r1 .. r_{n/2} i_{(n+1)/2-1} .. i1)
 *   dftf_fwd, r2cf, c2rf  the same in single precision (fftwf_*)
 *
 * Planner flags: FFTW_ESTIMATE; DT_FFTW_FLAGS (comma list) adds
 * `measure` (FFTW_MEASURE instead), `nosimd` (FFTW_NO_SIMD: scalar codelets
 * only), `inplace` (one array); DT_FFTW_OFFSET=k moves the arrays k reals
 * off fftw_malloc's alignment (other codelets). DT_FFTW_PRINT=1 prints the
 * plan on stderr (for triage only: the driver treats stderr as dgad's). */
#include "dt.h"
#include <fftw3.h>

static unsigned flags_from_env(int *inplace, int *offset)
{
    unsigned fl = FFTW_ESTIMATE;
    const char *e = getenv("DT_FFTW_FLAGS");
    *inplace = 0;
    if (e) {
        if (strstr(e, "measure")) fl = FFTW_MEASURE;
        if (strstr(e, "nosimd")) fl |= FFTW_NO_SIMD;
        if (strstr(e, "inplace")) *inplace = 1;
    }
    e = getenv("DT_FFTW_OFFSET");
    *offset = e ? atoi(e) : 0;
    return fl;
}
static int print_plan(void) { return getenv("DT_FFTW_PRINT") && atoi(getenv("DT_FFTW_PRINT")); }

/* cos and sin of 2*pi*m/N, m reduced mod N, to ~1e-19 (exact at quarters) */
static void cs(long m, long N, double *c, double *s)
{
    m %= N;
    if (m < 0) m += N;
    if ((4 * m) % N == 0) {
        int q = (int)(4 * m / N);
        static const double C[4] = {1, 0, -1, 0}, S[4] = {0, 1, 0, -1};
        *c = C[q]; *s = S[q];
        return;
    }
    long double a = 6.283185307179586476925286766559L * (long double)m / (long double)N;
    *c = (double)cosl(a); *s = (double)sinl(a);
}
/* zeros for the fixed size parameters (so that the reference is all analytic) */
static void ref_fixed(int m, int nfix)
{
    if (!dt_ref_on) return;
    for (int i = 0; i < m; i++) for (int j = 0; j < nfix; j++) dt_ref(i, j, 0.0);
}
/* complex DFT, sign s, over N = n0*n1 points (n1 = 1: 1-D): entries of the
 * real 2N x 2N Jacobian; input column offset nfix */
static void ref_dft(int n0, int n1, int s, int nfix)
{
    if (!dt_ref_on) return;
    long N = (long)n0 * n1;
    ref_fixed(2 * N, nfix);
    for (long k0 = 0; k0 < n0; k0++) for (long k1 = 0; k1 < n1; k1++)
        for (long j0 = 0; j0 < n0; j0++) for (long j1 = 0; j1 < n1; j1++) {
            long m = ((j0 * k0) % n0) * n1 + ((j1 * k1) % n1) * n0;
            double c, sn;
            cs(m, N, &c, &sn);
            sn *= s;
            int k = (int)(k0 * n1 + k1), j = (int)(j0 * n1 + j1);
            /* y = sum x e^{i s theta}: Re y = a c - b sn, Im y = a sn + b c */
            dt_ref(2 * k, nfix + 2 * j, c);
            dt_ref(2 * k, nfix + 2 * j + 1, -sn);
            dt_ref(2 * k + 1, nfix + 2 * j, sn);
            dt_ref(2 * k + 1, nfix + 2 * j + 1, c);
        }
}
static void ref_r2c(int n, int nfix)
{
    if (!dt_ref_on) return;
    int m = 2 * (n / 2 + 1);
    ref_fixed(m, nfix);
    for (long k = 0; k <= n / 2; k++) for (long j = 0; j < n; j++) {
        double c, s;
        cs(j * k, n, &c, &s);
        dt_ref(2 * k, nfix + j, c);
        dt_ref(2 * k + 1, nfix + j, -s);
    }
}
/* y_j = Re X_0 + 2 sum_{0<k<n/2} (Re X_k cos - Im X_k sin) + [n even] (-1)^j Re X_{n/2} */
static void ref_c2r(int n, int nfix)
{
    if (!dt_ref_on) return;
    ref_fixed(n, nfix);
    for (long j = 0; j < n; j++) for (long k = 0; k <= n / 2; k++) {
        double c, s, w = (k == 0 || 2 * k == n) ? 1 : 2;
        cs(j * k, n, &c, &s);
        dt_ref(j, nfix + 2 * k, w * c);
        dt_ref(j, nfix + 2 * k + 1, (k == 0 || 2 * k == n) ? 0.0 : -w * s);
    }
}

/* double and float versions of the 1-D complex DFT, r2c and c2r */
#define GEN(SUF, R, PFX, IN, OUTV)                                                              \
static void dft1##SUF(int sign)                                                                 \
{                                                                                               \
    R *x = IN();                                                                                \
    int n = (int)dt_raw[0], inplace, off;                                                       \
    unsigned fl = flags_from_env(&inplace, &off);                                               \
    R *a = (R *)PFX##malloc(sizeof(R) * (2 * n + 16)) + off;                                   \
    R *b = inplace ? a : (R *)PFX##malloc(sizeof(R) * (2 * n + 16)) + off;                      \
    PFX##plan p = PFX##plan_dft_1d(n, (PFX##complex *)a, (PFX##complex *)b, sign, fl);         \
    if (print_plan()) PFX##fprint_plan(p, stderr);                                             \
    for (int i = 0; i < 2 * n; i++) a[i] = x[1 + i];                                           \
    PFX##execute(p);                                                                            \
    OUTV(b, 2 * n);                                                                             \
    ref_dft(n, 1, sign, 1);                                                                     \
}                                                                                               \
static void r2c##SUF(void)                                                                      \
{                                                                                               \
    R *x = IN();                                                                                \
    int n = (int)dt_raw[0], inplace, off;                                                       \
    unsigned fl = flags_from_env(&inplace, &off);                                               \
    R *a = (R *)PFX##malloc(sizeof(R) * (n + 18)) + off;                                       \
    R *b = inplace ? a : (R *)PFX##malloc(sizeof(R) * (n + 18)) + off;                          \
    PFX##plan p = PFX##plan_dft_r2c_1d(n, a, (PFX##complex *)b, fl);                            \
    if (print_plan()) PFX##fprint_plan(p, stderr);                                             \
    for (int i = 0; i < n; i++) a[i] = x[1 + i];                                               \
    PFX##execute(p);                                                                            \
    OUTV(b, 2 * (n / 2 + 1));                                                                   \
    ref_r2c(n, 1);                                                                              \
}                                                                                               \
static void c2r##SUF(void)                                                                      \
{                                                                                               \
    R *x = IN();                                                                                \
    int n = (int)dt_raw[0], inplace, off, nc = n / 2 + 1;                                       \
    unsigned fl = flags_from_env(&inplace, &off);                                               \
    R *a = (R *)PFX##malloc(sizeof(R) * (2 * nc + 16)) + off;                                  \
    R *b = inplace ? a : (R *)PFX##malloc(sizeof(R) * (2 * nc + 16)) + off;                     \
    PFX##plan p = PFX##plan_dft_c2r_1d(n, (PFX##complex *)a, b, fl);                            \
    if (print_plan()) PFX##fprint_plan(p, stderr);                                             \
    for (int i = 0; i < 2 * nc; i++) a[i] = x[1 + i];                                          \
    PFX##execute(p);                                                                            \
    OUTV(b, n);                                                                                 \
    ref_c2r(n, 1);                                                                              \
}
GEN(, double, fftw_, dt_in, dt_outv)
GEN(f, float, fftwf_, dt_inf, dt_outvf)

static void dft_fwd(void) { dft1(FFTW_FORWARD); }
static void dft_bwd(void) { dft1(FFTW_BACKWARD); }
static void dftf_fwd(void) { dft1f(FFTW_FORWARD); }
static void dftf_bwd(void) { dft1f(FFTW_BACKWARD); }

static void dft2d_fwd(void)
{
    double *x = dt_in();
    int n0 = (int)dt_raw[0], n1 = (int)dt_raw[1], N = n0 * n1, inplace, off;
    unsigned fl = flags_from_env(&inplace, &off);
    double *a = (double *)fftw_malloc(sizeof(double) * (2 * N + 16)) + off;
    double *b = inplace ? a : (double *)fftw_malloc(sizeof(double) * (2 * N + 16)) + off;
    fftw_plan p = fftw_plan_dft_2d(n0, n1, (fftw_complex *)a, (fftw_complex *)b, FFTW_FORWARD, fl);
    if (print_plan()) fftw_fprint_plan(p, stderr);
    for (int i = 0; i < 2 * N; i++) a[i] = x[2 + i];
    fftw_execute(p);
    dt_outv(b, 2 * N);
    ref_dft(n0, n1, FFTW_FORWARD, 2);
}

static void r2r(fftw_r2r_kind kind)
{
    double *x = dt_in();
    int n = (int)dt_raw[0], inplace, off;
    unsigned fl = flags_from_env(&inplace, &off);
    double *a = (double *)fftw_malloc(sizeof(double) * (n + 16)) + off;
    double *b = inplace ? a : (double *)fftw_malloc(sizeof(double) * (n + 16)) + off;
    fftw_plan p = fftw_plan_r2r_1d(n, a, b, kind, fl);
    if (print_plan()) fftw_fprint_plan(p, stderr);
    for (int i = 0; i < n; i++) a[i] = x[1 + i];
    fftw_execute(p);
    dt_outv(b, n);
    if (!dt_ref_on) return;
    ref_fixed(n, 1);
    for (long k = 0; k < n; k++) for (long j = 0; j < n; j++) {
        double c, s, v = 0;
        if (kind == FFTW_REDFT10) {          /* Y_k = 2 sum_j x_j cos(pi (2j+1) k / 2n) */
            cs((2 * j + 1) * k, 4L * n, &c, &s);
            v = 2 * c;
        } else if (kind == FFTW_REDFT01) {   /* Y_k = x_0 + 2 sum_{j>0} x_j cos(pi j (2k+1) / 2n) */
            cs(j * (2 * k + 1), 4L * n, &c, &s);
            v = j == 0 ? 1.0 : 2 * c;
        } else {                              /* R2HC: r_k = sum x_j cos, i_k = -sum x_j sin */
            long kk = k <= n / 2 ? k : n - k;
            cs(j * kk, n, &c, &s);
            v = k <= n / 2 ? c : -s;
        }
        dt_ref((int)k, (int)(1 + j), v);
    }
}
static void redft10(void) { r2r(FFTW_REDFT10); }
static void redft01(void) { r2r(FFTW_REDFT01); }
static void r2hc(void) { r2r(FFTW_R2HC); }

#define C(n) {#n, n}
static const struct dt_case cases[] = {
    C(dft_fwd), C(dft_bwd), C(dft2d_fwd), {"r2c", r2c}, {"c2r", c2r}, C(redft10), C(redft01), C(r2hc),
    C(dftf_fwd), C(dftf_bwd), {"r2cf", r2cf}, {"c2rf", c2rf},
    {NULL, NULL}};
int main(int argc, char **argv) { return dt_main(argc, argv, cases); }
