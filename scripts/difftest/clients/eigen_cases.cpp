// Eigen cases: dense solves, a self-adjoint eigenproblem, a matrix
// exponential (unsupported/MatrixFunctions), a float product.
#include "dt.h"
#include <Eigen/Dense>
#include <unsupported/Eigen/MatrixFunctions>
using namespace Eigen;
typedef Matrix<double, Dynamic, Dynamic, RowMajor> M;

static int sqn(int m, int extra) { int n = 1; while (n * n + extra * n < m) n++; return n; }
static void solve_ref(int n)
{
    if (!dt_ref_on) return;
    Map<M> A(dt_raw, n, n);
    Map<VectorXd> b(dt_raw + n * n, n);
    M inv = A.inverse();
    VectorXd s = inv * b;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) dt_ref(k, i * n + j, -inv(k, i) * s(j));
            dt_ref(k, n * n + i, inv(k, i));
        }
}
template <class Dec> static void solve_with(bool ref)
{
    double *x = dt_in();
    int n = sqn(dt_n, 1);
    Map<M> A(x, n, n);
    Map<VectorXd> b(x + n * n, n);
    VectorXd s = Dec(A).solve(b);
    dt_outv(s.data(), n);
    if (ref) solve_ref(n);
}
static void lu_solve() { solve_with<PartialPivLU<M>>(true); }
static void qr_solve() { solve_with<HouseholderQR<M>>(true); }
static void llt_solve() { solve_with<LLT<M>>(false); }
static void ldlt_solve() { solve_with<LDLT<M>>(false); }
static void expm()
{
    double *x = dt_in();
    int n = sqn(dt_n, 0);
    Map<M> A(x, n, n);
    M E = A.exp();
    dt_outv(E.data(), n * n);
}
static void selfadjoint_eig()
{
    double *x = dt_in();
    int n = sqn(dt_n, 0);
    Map<M> A(x, n, n);   // lower triangle read
    SelfAdjointEigenSolver<M> es(A, EigenvaluesOnly);
    VectorXd w = es.eigenvalues();
    dt_outv(w.data(), n);
}
static void matmul_f()
{
    float *x = dt_inf();
    int n = 1; while (2 * n * n < dt_n) n++;
    Map<Matrix<float, Dynamic, Dynamic, RowMajor>> A(x, n, n), B(x + n * n, n, n);
    Matrix<float, Dynamic, Dynamic, RowMajor> C = A * B;
    dt_outvf(C.data(), n * n);
    // dC_ij/dA_ik = B_kj, dC_ij/dB_kj = A_ik (the float inputs, exactly)
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++) {
                dt_ref(i * n + j, i * n + k, (float)dt_raw[n * n + k * n + j]);
                dt_ref(i * n + j, n * n + k * n + j, (float)dt_raw[i * n + k]);
            }
    if (dt_ref_on)  // every other entry is 0
        for (int i = 0; i < n * n; i++)
            for (int c = 0; c < 2 * n * n; c++) {
                int r = i / n, col = i % n;
                int isA = c < n * n && c / n == r, isB = c >= n * n && (c - n * n) % n == col;
                if (!isA && !isB) dt_ref(i, c, 0.0);
            }
}
// Eigen's own vectorised math (packet math: pexp, plog, psin, ptanh, ...,
// which take floats apart with integer and bitwise instructions)
#include <unsupported/Eigen/SpecialFunctions>
template <class T> static void array_math()
{
    int n = dt_n;
    Array<T, Dynamic, 1> x(n);
    if (sizeof(T) == 4) { float *v = dt_inf(); for (int i = 0; i < n; i++) x[i] = v[i]; }
    else { double *v = dt_in(); for (int i = 0; i < n; i++) x[i] = v[i]; }
    Array<T, Dynamic, 1> ys[] = {x.exp(), x.log(), x.sin(), x.cos(), x.tanh(), x.sqrt(), x.rsqrt(), x.log1p(),
                                 x.expm1(), x.pow(T(1.7)), x.atan(), x.erf(), x.lgamma(), x.logistic(), x.square() * x};
    for (auto &y : ys)
        for (int i = 0; i < n; i++) { T v = y[i]; if (sizeof(T) == 4) dt_outf((float)v); else dt_out((double)v); }
}
static void array_math_f() { array_math<float>(); }
static void array_math_d() { array_math<double>(); }

static const struct dt_case cases[] = {
    {"array_math_f", array_math_f}, {"array_math_d", array_math_d},
    {"lu_solve", lu_solve}, {"qr_solve", qr_solve}, {"llt_solve", llt_solve}, {"ldlt_solve", ldlt_solve},
    {"expm", expm}, {"selfadjoint_eig", selfadjoint_eig}, {"matmul_f", matmul_f}, {NULL, NULL}};
int main(int argc, char **argv) { return dt_main(argc, argv, cases); }
