/* LAPACK cases through the Fortran interface (reference LAPACK or
 * OpenBLAS's, chosen at link time). Matrices row-major in the input file,
 * transposed to column-major here. */
#include "dt.h"

extern void dgesv_(int *n, int *nrhs, double *a, int *lda, int *ipiv, double *b, int *ldb, int *info);
extern void dposv_(char *uplo, int *n, int *nrhs, double *a, int *lda, double *b, int *ldb, int *info);
extern void dsyev_(char *jobz, char *uplo, int *n, double *a, int *lda, double *w, double *work, int *lwork, int *info);
extern void dgeev_(char *jl, char *jr, int *n, double *a, int *lda, double *wr, double *wi, double *vl, int *ldvl,
                   double *vr, int *ldvr, double *work, int *lwork, int *info);
extern void dgels_(char *tr, int *m, int *n, int *nrhs, double *a, int *lda, double *b, int *ldb, double *work,
                   int *lwork, int *info);
extern void dgetrf_(int *m, int *n, double *a, int *lda, int *ipiv, int *info);
extern void dgetri_(int *n, double *a, int *lda, int *ipiv, double *work, int *lwork, int *info);

static int sqn(int m, int extra) { int n = 1; while (n * n + extra * n < m) n++; return n; }
static double *colmajor(const double *x, int r, int c)
{
    double *a = malloc(r * c * sizeof(double));
    for (int i = 0; i < r; i++) for (int j = 0; j < c; j++) a[j * r + i] = x[i * c + j];
    return a;
}
/* inverse of the row-major n x n matrix in dt_raw (native, for references) */
static void inverse_raw(int n, double *inv /* row-major */)
{
    double *a = colmajor(dt_raw, n, n), work[256];
    int ipiv[64], info, lw = 256;
    dgetrf_(&n, &n, a, &n, ipiv, &info);
    dgetri_(&n, a, &n, ipiv, work, &lw, &info);
    for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) inv[i * n + j] = a[j * n + i];
}
static void dgesv(void)
{
    double *x = dt_in();
    int n = sqn(dt_n, 1), one = 1, ipiv[64], info;
    double *a = colmajor(x, n, n), b[64];
    memcpy(b, x + n * n, n * sizeof(double));
    dgesv_(&n, &one, a, &n, ipiv, b, &n, &info);
    dt_outv(b, n);
    if (dt_ref_on) {
        double inv[4096], s[64];
        inverse_raw(n, inv);
        for (int k = 0; k < n; k++) { s[k] = 0; for (int i = 0; i < n; i++) s[k] += inv[k * n + i] * dt_raw[n * n + i]; }
        for (int k = 0; k < n; k++)
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < n; j++) dt_ref(k, i * n + j, -inv[k * n + i] * s[j]);
                dt_ref(k, n * n + i, inv[k * n + i]);
            }
    }
}
static void dposv(void)
{
    double *x = dt_in();
    int n = sqn(dt_n, 1), one = 1, info;
    double *a = colmajor(x, n, n), b[64];
    memcpy(b, x + n * n, n * sizeof(double));
    dposv_("L", &n, &one, a, &n, b, &n, &info);   /* column-major lower = row-major upper */
    dt_outv(b, n);
}
static void dsyev(void)
{
    double *x = dt_in();
    int n = sqn(dt_n, 0), lw = 1024, info;
    double *a = colmajor(x, n, n), w[64], work[1024];
    dsyev_("N", "L", &n, a, &n, w, work, &lw, &info);
    dt_outv(w, n);
}
static void dgeev(void)
{
    double *x = dt_in();
    int n = sqn(dt_n, 0), lw = 1024, info, one = 1;
    double *a = colmajor(x, n, n), wr[64], wi[64], work[1024], vl[1], vr[1];
    dgeev_("N", "N", &n, a, &n, wr, wi, vl, &one, vr, &one, work, &lw, &info);
    /* eigenvalues sorted by real part, then imaginary (the order LAPACK gives may change
     * under perturbation) */
    for (int i = 0; i < n; i++) for (int j = i + 1; j < n; j++)
        if (wr[j] < wr[i] || (wr[j] == wr[i] && wi[j] < wi[i])) {
            double t = wr[i]; wr[i] = wr[j]; wr[j] = t; t = wi[i]; wi[i] = wi[j]; wi[j] = t;
        }
    dt_outv(wr, n);
    dt_outv(wi, n);
}
static void dgels(void)
{
    /* 6 x 4 least squares: 24 matrix entries then 6 right-hand side entries */
    double *x = dt_in();
    int m = 6, n = 4, one = 1, lw = 1024, info;
    double *a = colmajor(x, m, n), b[6], work[1024];
    memcpy(b, x + m * n, m * sizeof(double));
    dgels_("N", &m, &n, &one, a, &m, b, &m, work, &lw, &info);
    dt_outv(b, n);
}
static void dgetri(void)
{
    double *x = dt_in();
    int n = sqn(dt_n, 0), ipiv[64], info, lw = 1024;
    double *a = colmajor(x, n, n), work[1024];
    dgetrf_(&n, &n, a, &n, ipiv, &info);
    dgetri_(&n, a, &n, ipiv, work, &lw, &info);
    dt_outv(a, n * n);
}
static const struct dt_case cases[] = {
    {"dgesv", dgesv}, {"dposv", dposv}, {"dsyev", dsyev}, {"dgeev", dgeev}, {"dgels", dgels}, {"dgetri", dgetri},
    {NULL, NULL}};
int main(int argc, char **argv) { return dt_main(argc, argv, cases); }
