/* CBLAS cases (OpenBLAS or reference). Input: m n k, then the data.
 * dgemm: C(m x n) = A(m x k) B(k x n); dgemv: y = A(m x n) x;
 * dtrsm: solve L X = B, L (m x m) lower triangular, B (m x n). */
#include "dt.h"
#include <cblas.h>

static void dgemm(void)
{
    double *x = dt_in();
    int m = (int)dt_raw[0], n = (int)dt_raw[1], k = (int)dt_raw[2];
    double *A = x + 3, *B = A + m * k, *Cm = calloc(m * n, sizeof(double));
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, A, k, B, n, 0.0, Cm, n);
    dt_outv(Cm, m * n);
}
static void dgemv(void)
{
    double *x = dt_in();
    int m = (int)dt_raw[0], n = (int)dt_raw[1];
    double *A = x + 3, *v = A + m * n, *y = calloc(m, sizeof(double));
    cblas_dgemv(CblasRowMajor, CblasNoTrans, m, n, 1.0, A, n, v, 1, 0.0, y, 1);
    dt_outv(y, m);
}
static void dtrsm(void)
{
    double *x = dt_in();
    int m = (int)dt_raw[0], n = (int)dt_raw[1];
    double *L = x + 3, *B = L + m * m;
    cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, m, n, 1.0, L, m, B, n);
    dt_outv(B, m * n);
}
static const struct dt_case cases[] = {{"dgemm", dgemm}, {"dgemv", dgemv}, {"dtrsm", dtrsm}, {NULL, NULL}};
int main(int argc, char **argv) { return dt_main(argc, argv, cases); }
