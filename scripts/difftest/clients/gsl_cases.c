/* GSL cases (link: -lgsl -lgslcblas -lm). Analytic references where GSL
 * documents the derivative; the driver falls back to finite differences. */
#include "dt.h"
#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_odeiv2.h>
#include <gsl/gsl_roots.h>
#include <gsl/gsl_spline.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_sort_vector.h>
#include <gsl/gsl_poly.h>
#include <gsl/gsl_fft_real.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_statistics.h>
#include <gsl/gsl_complex_math.h>

#define SF1(NAME, EXPR, REF) static void NAME(void) { double *x = dt_in(); double a = x[0]; dt_out(EXPR); \
    if (dt_ref_on) { a = dt_raw[0]; dt_ref(0, 0, REF); } }
SF1(sf_bessel_J0, gsl_sf_bessel_J0(a), -gsl_sf_bessel_J1(a))
SF1(sf_bessel_J1, gsl_sf_bessel_J1(a), gsl_sf_bessel_J0(a) - gsl_sf_bessel_J1(a) / a)
SF1(sf_bessel_Y0, gsl_sf_bessel_Y0(a), -gsl_sf_bessel_Y1(a))
SF1(sf_bessel_K0, gsl_sf_bessel_K0(a), -gsl_sf_bessel_K1(a))
SF1(sf_bessel_I0, gsl_sf_bessel_I0(a), gsl_sf_bessel_I1(a))
SF1(sf_gamma, gsl_sf_gamma(a), gsl_sf_gamma(a) * gsl_sf_psi(a))
SF1(sf_lngamma, gsl_sf_lngamma(a), gsl_sf_psi(a))
SF1(sf_psi, gsl_sf_psi(a), gsl_sf_psi_1(a))
SF1(sf_erf, gsl_sf_erf(a), 2 / sqrt(M_PI) * exp(-a * a))
SF1(sf_erfc, gsl_sf_erfc(a), -2 / sqrt(M_PI) * exp(-a * a))
SF1(sf_expint_E1, gsl_sf_expint_E1(a), -exp(-a) / a)
SF1(sf_expint_Ei, gsl_sf_expint_Ei(a), exp(a) / a)
SF1(sf_dilog, gsl_sf_dilog(a), -log(1 - a) / a)
SF1(sf_airy_Ai, gsl_sf_airy_Ai(a, GSL_PREC_DOUBLE), gsl_sf_airy_Ai_deriv(a, GSL_PREC_DOUBLE))
SF1(sf_zeta, gsl_sf_zeta(a), NAN)
SF1(sf_ellint_Kcomp, gsl_sf_ellint_Kcomp(a, GSL_PREC_DOUBLE),
    gsl_sf_ellint_Ecomp(a, GSL_PREC_DOUBLE) / (a * (1 - a * a)) - gsl_sf_ellint_Kcomp(a, GSL_PREC_DOUBLE) / a)
SF1(sf_lambert_W0, gsl_sf_lambert_W0(a), gsl_sf_lambert_W0(a) / (a * (1 + gsl_sf_lambert_W0(a))))
SF1(sf_legendre_P3, gsl_sf_legendre_P3(a), 0.5 * (15 * a * a - 3))
SF1(sf_atanint, gsl_sf_atanint(a), atan(a) / a)
SF1(sf_Si, gsl_sf_Si(a), sin(a) / a)
SF1(sf_log1plusx, gsl_sf_log_1plusx(a), 1 / (1 + a))
SF1(sf_synchrotron_1, gsl_sf_synchrotron_1(a), NAN)

static void sf_beta(void)
{
    double *x = dt_in();
    dt_out(gsl_sf_beta(x[0], x[1]));
    double a = dt_raw[0], b = dt_raw[1], B = gsl_sf_beta(a, b);
    dt_ref(0, 0, B * (gsl_sf_psi(a) - gsl_sf_psi(a + b)));
    dt_ref(0, 1, B * (gsl_sf_psi(b) - gsl_sf_psi(a + b)));
}
static void sf_hyperg_2F1(void)
{
    double *x = dt_in();
    double a = x[0], b = x[1], c = x[2], z = x[3];
    dt_out(gsl_sf_hyperg_2F1(a, b, c, z));
    a = dt_raw[0]; b = dt_raw[1]; c = dt_raw[2]; z = dt_raw[3];
    dt_ref(0, 3, a * b / c * gsl_sf_hyperg_2F1(a + 1, b + 1, c + 1, z));
}
static void sf_bessel_Jnu(void)
{
    double *x = dt_in();  /* nu, x */
    dt_out(gsl_sf_bessel_Jnu(x[0], x[1]));
    double nu = dt_raw[0], z = dt_raw[1];
    dt_ref(0, 1, 0.5 * (gsl_sf_bessel_Jnu(nu - 1, z) - gsl_sf_bessel_Jnu(nu + 1, z)));
}

/* integration: I(a, b) = int_0^b exp(-a t^2) cos(t) dt by qags and qag(GK61);
 * dI/db = exp(-a b^2) cos b. */
static double integrand(double t, void *p) { double a = *(double *)p; return exp(-a * t * t) * cos(t); }
static void integ_common(int which)
{
    double *x = dt_in();
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(200);
    gsl_function F = { integrand, &x[0] };
    double r, e;
    if (which == 0) gsl_integration_qags(&F, 0, x[1], 0, 1e-12, 200, w, &r, &e);
    else gsl_integration_qag(&F, 0, x[1], 0, 1e-12, 200, GSL_INTEG_GAUSS61, w, &r, &e);
    dt_out(r);
    double a = dt_raw[0], b = dt_raw[1];
    dt_ref(0, 1, exp(-a * b * b) * cos(b));
}
static void integ_qags(void) { integ_common(0); }
static void integ_qag(void) { integ_common(1); }
/* semi-infinite: int_0^inf exp(-a t) sin(t) dt = 1/(1+a^2); d/da = -2a/(1+a^2)^2 */
static double integrand2(double t, void *p) { double a = *(double *)p; return exp(-a * t) * sin(t); }
static void integ_qagiu(void)
{
    double *x = dt_in();
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(200);
    gsl_function F = { integrand2, &x[0] };
    double r, e;
    gsl_integration_qagiu(&F, 0, 0, 1e-12, 200, w, &r, &e);
    dt_out(r);
    double a = dt_raw[0];
    dt_ref(0, 0, -2 * a / ((1 + a * a) * (1 + a * a)));
}

/* ODE rk8pd: y'' = -k y, y(0) = y0, y'(0) = 0 to T = 3: y(T) = y0 cos(sqrt(k) T) */
static int ode_f(double t, const double y[], double f[], void *p)
{
    (void)t; double k = *(double *)p; f[0] = y[1]; f[1] = -k * y[0]; return GSL_SUCCESS;
}
static void ode_rk8pd(void)
{
    double *x = dt_in();  /* k, y0 */
    gsl_odeiv2_system sys = { ode_f, NULL, 2, &x[0] };
    gsl_odeiv2_driver *d = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-3, 1e-13, 1e-13);
    double t = 0, y[2] = { x[1], 0 };
    gsl_odeiv2_driver_apply(d, &t, 3.0, y);
    dt_out(y[0]);
    dt_out(y[1]);
    double k = dt_raw[0], y0 = dt_raw[1], w = sqrt(k), T = 3.0;
    dt_ref(0, 0, -y0 * sin(w * T) * T / (2 * w));
    dt_ref(0, 1, cos(w * T));
    /* y' = -y0 w sin(wT) */
    dt_ref(1, 0, -y0 * (sin(w * T) / (2 * w) + w * cos(w * T) * T / (2 * w)));
    dt_ref(1, 1, -w * sin(w * T));
}
/* ODE with fixed steps (rk4, 200 steps): no step-size control in the path */
static void ode_rk4_fixed(void)
{
    double *x = dt_in();
    gsl_odeiv2_system sys = { ode_f, NULL, 2, &x[0] };
    gsl_odeiv2_driver *d = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk4, 0.015, 1e-6, 0);
    double t = 0, y[2] = { x[1], 0 };
    gsl_odeiv2_driver_apply_fixed_step(d, &t, 0.015, 200, y);
    dt_out(y[0]);
    dt_out(y[1]);
}

/* roots of f(r) = r^3 + c r - a: dr/da = 1/(3r^2+c), dr/dc = -r/(3r^2+c) */
static double rf(double r, void *p) { double *q = (double *)p; return r * r * r + q[1] * r - q[0]; }
static double rdf(double r, void *p) { double *q = (double *)p; return 3 * r * r + q[1]; }
static void rfdf(double r, void *p, double *f, double *df) { *f = rf(r, p); *df = rdf(r, p); }
static void root_ref(double r)
{
    double c = dt_raw[1];
    dt_ref(0, 0, 1 / (3 * r * r + c));
    dt_ref(0, 1, -r / (3 * r * r + c));
}
static void root_newton(void)
{
    double *x = dt_in();
    gsl_function_fdf FDF = { rf, rdf, rfdf, x };
    gsl_root_fdfsolver *s = gsl_root_fdfsolver_alloc(gsl_root_fdfsolver_newton);
    double r = 1.0, r0;
    gsl_root_fdfsolver_set(s, &FDF, r);
    for (int it = 0; it < 100; it++) {
        gsl_root_fdfsolver_iterate(s);
        r0 = r; r = gsl_root_fdfsolver_root(s);
        if (gsl_root_test_delta(r, r0, 0, 1e-15) == GSL_SUCCESS && it > 3) break;
    }
    dt_out(r);
    root_ref(r);
}
static void root_brent(void)
{
    double *x = dt_in();
    gsl_function F = { rf, x };
    gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    gsl_root_fsolver_set(s, &F, 0.0, 5.0);
    double r = 0;
    for (int it = 0; it < 200; it++) {
        gsl_root_fsolver_iterate(s);
        r = gsl_root_fsolver_root(s);
        if (gsl_root_test_interval(gsl_root_fsolver_x_lower(s), gsl_root_fsolver_x_upper(s), 0, 1e-15) == GSL_SUCCESS) break;
    }
    dt_out(r);
    root_ref(r);
}

/* cubic spline through (i, x_i), i = 0..n-2, evaluated at t = x[n-1]
 * (value and derivative); linear in the data. */
static void spline_common(const gsl_interp_type *T)
{
    double *x = dt_in();
    int n = dt_n - 1;
    double xs[64];
    for (int i = 0; i < n; i++) xs[i] = i;
    gsl_interp_accel *acc = gsl_interp_accel_alloc();
    gsl_spline *sp = gsl_spline_alloc(T, n);
    gsl_spline_init(sp, xs, x, n);
    double t = x[n];
    dt_out(gsl_spline_eval(sp, t, acc));
    dt_out(gsl_spline_eval_deriv(sp, t, acc));
    if (dt_ref_on) {
        gsl_spline_init(sp, xs, dt_raw, n);
        dt_ref(0, n, gsl_spline_eval_deriv(sp, dt_raw[n], acc));
        dt_ref(1, n, gsl_spline_eval_deriv2(sp, dt_raw[n], acc));
    }
}
static void spline_cspline(void) { spline_common(gsl_interp_cspline); }
static void spline_akima(void) { spline_common(gsl_interp_akima); }
static void spline_steffen(void) { spline_common(gsl_interp_steffen); }

/* linear algebra on an n x n matrix A (first n^2 inputs, row-major) and b */
static int sq(int m) { int n = 0; while ((n + 1) * (n + 2) <= m) n++; return n; }
static void solve_ref(int n, const double *A, const double *b)
{
    if (!dt_ref_on) return;
    gsl_matrix *M = gsl_matrix_alloc(n, n), *Inv = gsl_matrix_alloc(n, n);
    gsl_permutation *p = gsl_permutation_alloc(n);
    int s;
    memcpy(M->data, A, n * n * sizeof(double));
    gsl_linalg_LU_decomp(M, p, &s);
    gsl_linalg_LU_invert(M, p, Inv);
    double xs[64];
    for (int k = 0; k < n; k++) { xs[k] = 0; for (int i = 0; i < n; i++) xs[k] += gsl_matrix_get(Inv, k, i) * b[i]; }
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) dt_ref(k, i * n + j, -gsl_matrix_get(Inv, k, i) * xs[j]);
            dt_ref(k, n * n + i, gsl_matrix_get(Inv, k, i));
        }
}
static void linalg_solve(int how)
{
    double *x = dt_in();
    int n = sq(dt_n);
    gsl_matrix_view A = gsl_matrix_view_array(x, n, n);
    gsl_vector_view b = gsl_vector_view_array(x + n * n, n);
    gsl_vector *sol = gsl_vector_alloc(n);
    if (how == 0) {
        gsl_permutation *p = gsl_permutation_alloc(n); int s;
        gsl_linalg_LU_decomp(&A.matrix, p, &s);
        gsl_linalg_LU_solve(&A.matrix, p, &b.vector, sol);
    } else if (how == 1) {
        gsl_vector *tau = gsl_vector_alloc(n);
        gsl_linalg_QR_decomp(&A.matrix, tau);
        gsl_linalg_QR_solve(&A.matrix, tau, &b.vector, sol);
    } else {
        gsl_linalg_cholesky_decomp1(&A.matrix);
        gsl_linalg_cholesky_solve(&A.matrix, &b.vector, sol);
    }
    dt_outv(sol->data, n);
    if (how != 2) solve_ref(n, dt_raw, dt_raw + n * n);
}
static void linalg_LU_solve(void) { linalg_solve(0); }
static void linalg_QR_solve(void) { linalg_solve(1); }
/* Cholesky reads only the lower triangle: FD reference (driver) */
static void linalg_chol_solve(void) { linalg_solve(2); }
static void linalg_det(void)
{
    double *x = dt_in();
    int n = 1; while (n * n < dt_n) n++;
    gsl_matrix_view A = gsl_matrix_view_array(x, n, n);
    gsl_permutation *p = gsl_permutation_alloc(n); int s;
    gsl_linalg_LU_decomp(&A.matrix, p, &s);
    dt_out(gsl_linalg_LU_det(&A.matrix, s));
}
static void linalg_SV(void)
{
    double *x = dt_in();
    int n = 1; while (n * n < dt_n) n++;
    gsl_matrix_view A = gsl_matrix_view_array(x, n, n);
    gsl_matrix *V = gsl_matrix_alloc(n, n);
    gsl_vector *S = gsl_vector_alloc(n), *w = gsl_vector_alloc(n);
    gsl_linalg_SV_decomp(&A.matrix, V, S, w);
    dt_outv(S->data, n);
}
static void eigen_symm(void)
{
    double *x = dt_in();
    int n = 1; while (n * n < dt_n) n++;
    gsl_matrix_view A = gsl_matrix_view_array(x, n, n);  /* lower triangle used */
    gsl_vector *ev = gsl_vector_alloc(n);
    gsl_eigen_symm_workspace *w = gsl_eigen_symm_alloc(n);
    gsl_eigen_symm(&A.matrix, ev, w);
    gsl_sort_vector(ev);
    dt_outv(ev->data, n);
}
static void blas_dgemm(void)
{
    double *x = dt_in();
    int n = 1; while (2 * n * n < dt_n) n++;
    gsl_matrix_view A = gsl_matrix_view_array(x, n, n), B = gsl_matrix_view_array(x + n * n, n, n);
    gsl_matrix *C = gsl_matrix_alloc(n, n);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &A.matrix, &B.matrix, 0.0, C);
    dt_outv(C->data, n * n);
}

/* roots of x^3 + a x^2 + b x + c (three real roots) */
static void poly_cubic(void)
{
    double *x = dt_in(), r[3];
    gsl_poly_solve_cubic(x[0], x[1], x[2], &r[0], &r[1], &r[2]);
    dt_outv(r, 3);
}
/* value of a polynomial and its roots through the companion matrix (complex) */
static void poly_complex_solve(void)
{
    double *x = dt_in(), z[8];
    double a[5] = { x[0], x[1], x[2], x[3], 1.0 };
    gsl_poly_complex_workspace *w = gsl_poly_complex_workspace_alloc(5);
    gsl_poly_complex_solve(a, 5, w, z);
    /* sort by real part, then imaginary */
    for (int i = 0; i < 4; i++) for (int j = i + 1; j < 4; j++)
        if (z[2 * j] < z[2 * i] || (z[2 * j] == z[2 * i] && z[2 * j + 1] < z[2 * i + 1])) {
            double t0 = z[2 * i], t1 = z[2 * i + 1]; z[2 * i] = z[2 * j]; z[2 * i + 1] = z[2 * j + 1]; z[2 * j] = t0; z[2 * j + 1] = t1;
        }
    dt_outv(z, 8);
}
static void fft_radix2(void)
{
    double *x = dt_in();
    gsl_fft_real_radix2_transform(x, 1, dt_n);
    dt_outv(x, dt_n);
}
static void fft_mixed(void)
{
    double *x = dt_in();
    gsl_fft_real_wavetable *wt = gsl_fft_real_wavetable_alloc(dt_n);
    gsl_fft_real_workspace *ws = gsl_fft_real_workspace_alloc(dt_n);
    gsl_fft_real_transform(x, 1, dt_n, wt, ws);
    dt_outv(x, dt_n);
}
/* quadratic least-squares fit of y_i at t_i = i: coefficients, linear in y */
static void multifit_quadratic(void)
{
    double *x = dt_in();
    int n = dt_n;
    gsl_matrix *X = gsl_matrix_alloc(n, 3), *cov = gsl_matrix_alloc(3, 3);
    gsl_vector *c = gsl_vector_alloc(3);
    for (int i = 0; i < n; i++) { gsl_matrix_set(X, i, 0, 1); gsl_matrix_set(X, i, 1, i); gsl_matrix_set(X, i, 2, i * i); }
    gsl_vector_view y = gsl_vector_view_array(x, n);
    double chisq;
    gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(n, 3);
    gsl_multifit_linear(X, &y.vector, c, cov, &chisq, w);
    dt_outv(c->data, 3);
    dt_out(chisq);
}
static void stats(void)
{
    double *x = dt_in();
    dt_out(gsl_stats_mean(x, 1, dt_n));
    dt_out(gsl_stats_variance(x, 1, dt_n));
    dt_out(gsl_stats_skew(x, 1, dt_n));
    double *y = malloc(dt_n * sizeof(double));
    memcpy(y, x, dt_n * sizeof(double));
    gsl_sort(y, 1, dt_n);
    dt_out(gsl_stats_median_from_sorted_data(y, 1, dt_n));
    dt_out(gsl_stats_quantile_from_sorted_data(y, 1, dt_n, 0.3));
}
static void eigen_nonsymm(void)
{
    double *x = dt_in();
    int n = 1; while (n * n < dt_n) n++;
    gsl_matrix_view A = gsl_matrix_view_array(x, n, n);
    gsl_vector_complex *ev = gsl_vector_complex_alloc(n);
    gsl_eigen_nonsymm_workspace *w = gsl_eigen_nonsymm_alloc(n);
    gsl_eigen_nonsymm(&A.matrix, ev, w);
    double re[16], im[16];
    for (int i = 0; i < n; i++) { re[i] = GSL_REAL(gsl_vector_complex_get(ev, i)); im[i] = GSL_IMAG(gsl_vector_complex_get(ev, i)); }
    for (int i = 0; i < n; i++) for (int j = i + 1; j < n; j++)
        if (re[j] < re[i] || (re[j] == re[i] && im[j] < im[i])) { double t = re[i]; re[i] = re[j]; re[j] = t; t = im[i]; im[i] = im[j]; im[j] = t; }
    dt_outv(re, n);
    dt_outv(im, n);
}
/* GSL's own complex functions */
static void complex_fns(void)
{
    double *x = dt_in();
    gsl_complex z = gsl_complex_rect(x[0], x[1]);
    gsl_complex l = gsl_complex_log(z), p = gsl_complex_pow_real(z, 2.5), t = gsl_complex_arctanh(z), s = gsl_complex_sqrt(z);
    dt_out(GSL_REAL(l)); dt_out(GSL_IMAG(l)); dt_out(GSL_REAL(p)); dt_out(GSL_IMAG(p));
    dt_out(GSL_REAL(t)); dt_out(GSL_IMAG(t)); dt_out(GSL_REAL(s)); dt_out(GSL_IMAG(s));
}

static const struct dt_case cases[] = {
    {"poly_cubic", poly_cubic}, {"poly_complex_solve", poly_complex_solve}, {"fft_radix2", fft_radix2},
    {"fft_mixed", fft_mixed}, {"multifit_quadratic", multifit_quadratic}, {"stats", stats},
    {"eigen_nonsymm", eigen_nonsymm}, {"complex_fns", complex_fns},
    {"sf_bessel_J0", sf_bessel_J0}, {"sf_bessel_J1", sf_bessel_J1}, {"sf_bessel_Y0", sf_bessel_Y0},
    {"sf_bessel_K0", sf_bessel_K0}, {"sf_bessel_I0", sf_bessel_I0}, {"sf_gamma", sf_gamma},
    {"sf_lngamma", sf_lngamma}, {"sf_psi", sf_psi}, {"sf_erf", sf_erf}, {"sf_erfc", sf_erfc},
    {"sf_expint_E1", sf_expint_E1}, {"sf_expint_Ei", sf_expint_Ei}, {"sf_dilog", sf_dilog},
    {"sf_airy_Ai", sf_airy_Ai}, {"sf_zeta", sf_zeta}, {"sf_ellint_Kcomp", sf_ellint_Kcomp},
    {"sf_lambert_W0", sf_lambert_W0}, {"sf_legendre_P3", sf_legendre_P3}, {"sf_atanint", sf_atanint},
    {"sf_Si", sf_Si}, {"sf_log1plusx", sf_log1plusx}, {"sf_synchrotron_1", sf_synchrotron_1},
    {"sf_beta", sf_beta}, {"sf_hyperg_2F1", sf_hyperg_2F1}, {"sf_bessel_Jnu", sf_bessel_Jnu},
    {"integ_qags", integ_qags}, {"integ_qag", integ_qag}, {"integ_qagiu", integ_qagiu},
    {"ode_rk8pd", ode_rk8pd}, {"ode_rk4_fixed", ode_rk4_fixed},
    {"root_newton", root_newton}, {"root_brent", root_brent},
    {"spline_cspline", spline_cspline}, {"spline_akima", spline_akima}, {"spline_steffen", spline_steffen},
    {"linalg_LU_solve", linalg_LU_solve}, {"linalg_QR_solve", linalg_QR_solve},
    {"linalg_chol_solve", linalg_chol_solve}, {"linalg_det", linalg_det}, {"linalg_SV", linalg_SV},
    {"eigen_symm", eigen_symm}, {"blas_dgemm", blas_dgemm},
    {NULL, NULL}};
int main(int argc, char **argv) { gsl_set_error_handler_off(); return dt_main(argc, argv, cases); }
