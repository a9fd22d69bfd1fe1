// Boost.Math special functions (header-only). Analytic references where
// Boost documents the derivative (its *_prime functions, gamma_p_derivative,
// ibeta_derivative) or where it is a textbook formula; the driver falls back
// to central differences for the other entries (orders, shape parameters).
//
// Boost's default policy computes double functions in long double
// (promote_double<true>: x87 arithmetic on x86-64); the build
// boost_O3native_nopromote sets BOOST_MATH_PROMOTE_DOUBLE_POLICY=false, so
// the same functions run in double (SSE/AVX). float functions are computed
// in double either way (promote_float<true>).
//
// Every call is qualified (bm::erf, not erf): with <math.h>'s ::erf in
// scope an unqualified call would pick libm's non-template overload.
#include "dt.h"
#include <boost/math/special_functions.hpp>
#include <boost/math/special_functions/bessel_prime.hpp>
#include <boost/math/special_functions/airy.hpp>
#include <boost/math/special_functions/lambert_w.hpp>
#include <boost/math/special_functions/chebyshev.hpp>
#include <boost/math/special_functions/hypergeometric_1F1.hpp>
#include <boost/math/special_functions/jacobi_elliptic.hpp>
#include <boost/math/special_functions/owens_t.hpp>
#include <boost/math/constants/constants.hpp>
namespace bm = boost::math;
static const double PI = boost::math::constants::pi<double>();

// one input a, one output; REF is the derivative in terms of a = dt_raw[0]
#define SF1(NAME, EXPR, REF) static void NAME() { double *x = dt_in(); double a = x[0]; dt_out(EXPR); \
    if (dt_ref_on) { a = dt_raw[0]; dt_ref(0, 0, REF); } }

// gamma family
SF1(tgamma, bm::tgamma(a), bm::tgamma(a) * bm::digamma(a))
SF1(lgamma, bm::lgamma(a), bm::digamma(a))
SF1(digamma, bm::digamma(a), bm::trigamma(a))
SF1(trigamma, bm::trigamma(a), bm::polygamma(2, a))
SF1(polygamma3, bm::polygamma(3, a), bm::polygamma(4, a))
SF1(tgamma1pm1, bm::tgamma1pm1(a), bm::tgamma(1 + a) * bm::digamma(1 + a))
// error function
SF1(erf, bm::erf(a), 2 / sqrt(PI) * exp(-a * a))
SF1(erfc, bm::erfc(a), -2 / sqrt(PI) * exp(-a * a))
SF1(erf_inv, bm::erf_inv(a), sqrt(PI) / 2 * exp(bm::erf_inv(a) * bm::erf_inv(a)))
SF1(erfc_inv, bm::erfc_inv(a), -sqrt(PI) / 2 * exp(bm::erfc_inv(a) * bm::erfc_inv(a)))
// Bessel functions of integer order (Boost's own j0/j1/y0/i0/k0 rational approximations)
SF1(bessel_j0, bm::cyl_bessel_j(0, a), -bm::cyl_bessel_j(1, a))
SF1(bessel_j1, bm::cyl_bessel_j(1, a), bm::cyl_bessel_j_prime(1, a))
SF1(bessel_y0, bm::cyl_neumann(0, a), -bm::cyl_neumann(1, a))
SF1(bessel_i0, bm::cyl_bessel_i(0, a), bm::cyl_bessel_i(1, a))
SF1(bessel_k0, bm::cyl_bessel_k(0, a), -bm::cyl_bessel_k(1, a))
SF1(sph_bessel2, bm::sph_bessel(2, a), bm::sph_bessel_prime(2, a))
// orthogonal polynomials
SF1(legendre_p5, bm::legendre_p(5, a), bm::legendre_p_prime(5, a))
SF1(legendre_p12, bm::legendre_p(12, a), bm::legendre_p_prime(12, a))
SF1(hermite5, bm::hermite(5, a), 10 * bm::hermite(4, a))
SF1(laguerre4, bm::laguerre(4, a), -bm::laguerre(3, 1, a))   // L_n' = -L_{n-1}^{(1)}
SF1(chebyshev_t7, bm::chebyshev_t(7, a), bm::chebyshev_t_prime(7, a))
// zeta: differences only
SF1(zeta, bm::zeta(a), NAN)
// exponential integrals
SF1(expint_ei, bm::expint(a), exp(a) / a)
SF1(expint_e1, bm::expint(1, a), -exp(-a) / a)
SF1(expint_e3, bm::expint(3, a), -bm::expint(2, a))             // E_n' = -E_{n-1}
// complete elliptic integrals in k
SF1(ellint_1c, bm::ellint_1(a), bm::ellint_2(a) / (a * (1 - a * a)) - bm::ellint_1(a) / a)
SF1(ellint_2c, bm::ellint_2(a), (bm::ellint_2(a) - bm::ellint_1(a)) / a)
// elementary
static double sinc_prime(double a)
{
    if (fabs(a) < 1e-2) return -a / 3 + a * a * a / 30 - pow(a, 5) / 840;
    return (a * cos(a) - sin(a)) / (a * a);
}
SF1(sinc_pi, bm::sinc_pi(a), sinc_prime(a))
SF1(log1p, bm::log1p(a), 1 / (1 + a))
SF1(expm1, bm::expm1(a), exp(a))
SF1(cbrt, bm::cbrt(a), 1 / (3 * bm::cbrt(a) * bm::cbrt(a)))
// Airy, Lambert W
SF1(airy_ai, bm::airy_ai(a), bm::airy_ai_prime(a))
SF1(airy_bi, bm::airy_bi(a), bm::airy_bi_prime(a))
SF1(airy_ai_prime, bm::airy_ai_prime(a), a * bm::airy_ai(a))
SF1(lambert_w0, bm::lambert_w0(a), bm::lambert_w0_prime(a))

// two or three inputs; entries without a formula are left to differences
static void beta()
{
    double *x = dt_in();
    dt_out(bm::beta(x[0], x[1]));
    double a = dt_raw[0], b = dt_raw[1], B = bm::beta(a, b);
    dt_ref(0, 0, B * (bm::digamma(a) - bm::digamma(a + b)));
    dt_ref(0, 1, B * (bm::digamma(b) - bm::digamma(a + b)));
}
static void tgamma_ratio()
{
    double *x = dt_in();
    dt_out(bm::tgamma_ratio(x[0], x[1]));
    double a = dt_raw[0], b = dt_raw[1], r = bm::tgamma_ratio(a, b);
    dt_ref(0, 0, r * bm::digamma(a));
    dt_ref(0, 1, -r * bm::digamma(b));
}
// cylinder functions of real order nu (input 0, differences) at x (input 1, *_prime)
#define BESSEL2(NAME, F, FP) static void NAME() { double *x = dt_in(); dt_out(bm::F(x[0], x[1])); \
    dt_ref(0, 1, bm::FP(dt_raw[0], dt_raw[1])); }
BESSEL2(cyl_bessel_j, cyl_bessel_j, cyl_bessel_j_prime)
BESSEL2(cyl_neumann, cyl_neumann, cyl_neumann_prime)
BESSEL2(cyl_bessel_i, cyl_bessel_i, cyl_bessel_i_prime)
BESSEL2(cyl_bessel_k, cyl_bessel_k, cyl_bessel_k_prime)
// incomplete gamma / beta: derivatives in x documented (gamma_p_derivative,
// ibeta_derivative); shape parameters by differences
static void gamma_p()
{
    double *x = dt_in();
    dt_out(bm::gamma_p(x[0], x[1]));
    dt_ref(0, 1, bm::gamma_p_derivative(dt_raw[0], dt_raw[1]));
}
static void gamma_q()
{
    double *x = dt_in();
    dt_out(bm::gamma_q(x[0], x[1]));
    dt_ref(0, 1, -bm::gamma_p_derivative(dt_raw[0], dt_raw[1]));
}
static void gamma_p_inv()
{
    double *x = dt_in();
    dt_out(bm::gamma_p_inv(x[0], x[1]));
    double a = dt_raw[0], p = dt_raw[1];
    dt_ref(0, 1, 1 / bm::gamma_p_derivative(a, bm::gamma_p_inv(a, p)));
}
static void ibeta()
{
    double *x = dt_in();
    dt_out(bm::ibeta(x[0], x[1], x[2]));
    dt_ref(0, 2, bm::ibeta_derivative(dt_raw[0], dt_raw[1], dt_raw[2]));
}
static void ibeta_inv()
{
    double *x = dt_in();
    dt_out(bm::ibeta_inv(x[0], x[1], x[2]));
    double a = dt_raw[0], b = dt_raw[1], p = dt_raw[2];
    dt_ref(0, 2, 1 / bm::ibeta_derivative(a, b, bm::ibeta_inv(a, b, p)));
}
// Owen's T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + t^2) / 2) / (1 + t^2) dt:
// dT/dh = -phi(h) erf(a h / sqrt 2) / 2, dT/da = exp(-h^2 (1 + a^2) / 2) / (2 pi (1 + a^2))
static void owens_t()
{
    double *x = dt_in();
    dt_out(bm::owens_t(x[0], x[1]));
    double h = dt_raw[0], a = dt_raw[1];
    dt_ref(0, 0, -exp(-h * h / 2) / sqrt(2 * PI) * bm::erf(a * h / sqrt(2.0)) / 2);
    dt_ref(0, 1, exp(-h * h * (1 + a * a) / 2) / (2 * PI * (1 + a * a)));
}
// Jacobi elliptic functions (k, u): d sn/du = cn dn, d cn/du = -sn dn, d dn/du = -k^2 sn cn
static void jacobi_elliptic()
{
    double *x = dt_in();
    double cn, dn, sn = bm::jacobi_elliptic(x[0], x[1], &cn, &dn);
    dt_out(sn); dt_out(cn); dt_out(dn);
    double k = dt_raw[0], u = dt_raw[1];
    sn = bm::jacobi_elliptic(k, u, &cn, &dn);
    dt_ref(0, 1, cn * dn); dt_ref(1, 1, -sn * dn); dt_ref(2, 1, -k * k * sn * cn);
}
// incomplete elliptic integrals (k, phi): dF/dphi = 1/sqrt(1 - k^2 sin^2 phi), dE/dphi = sqrt(...)
static void ellint_1i()
{
    double *x = dt_in();
    dt_out(bm::ellint_1(x[0], x[1]));
    double k = dt_raw[0], s = sin(dt_raw[1]);
    dt_ref(0, 1, 1 / sqrt(1 - k * k * s * s));
}
static void ellint_2i()
{
    double *x = dt_in();
    dt_out(bm::ellint_2(x[0], x[1]));
    double k = dt_raw[0], s = sin(dt_raw[1]);
    dt_ref(0, 1, sqrt(1 - k * k * s * s));
}
static void hypot()
{
    double *x = dt_in();
    dt_out(bm::hypot(x[0], x[1]));
    double a = dt_raw[0], b = dt_raw[1], r = sqrt(a * a + b * b);
    dt_ref(0, 0, a / r); dt_ref(0, 1, b / r);
}
static void powm1()
{
    double *x = dt_in();
    dt_out(bm::powm1(x[0], x[1]));
    double a = dt_raw[0], b = dt_raw[1];
    dt_ref(0, 0, b * pow(a, b - 1)); dt_ref(0, 1, pow(a, b) * log(a));
}
// 1F1(a; b; z): d/dz = a/b 1F1(a+1; b+1; z)
static void hyperg_1f1()
{
    double *x = dt_in();
    dt_out(bm::hypergeometric_1F1(x[0], x[1], x[2]));
    double a = dt_raw[0], b = dt_raw[1], z = dt_raw[2];
    dt_ref(0, 2, a / b * bm::hypergeometric_1F1(a + 1, b + 1, z));
}

// float and long double instantiations (the formula at the rounded input)
#define SF1F(NAME, EXPR, REF) static void NAME() { float *x = dt_inf(); float a = x[0]; dt_outf(EXPR); \
    if (dt_ref_on) { double a = (float)dt_raw[0]; dt_ref(0, 0, REF); } }
#define SF1L(NAME, EXPR, REF) static void NAME() { long double *x = dt_inl(); long double a = x[0]; dt_outl(EXPR); \
    if (dt_ref_on) { long double a = dt_raw[0]; dt_ref(0, 0, (double)(REF)); } }
SF1F(tgamma_f, bm::tgamma(a), bm::tgamma(a) * bm::digamma(a))
SF1F(erf_f, bm::erf(a), 2 / sqrt(PI) * exp(-a * a))
SF1F(bessel_j0_f, bm::cyl_bessel_j(0, a), -bm::cyl_bessel_j(1, a))
SF1L(tgamma_l, bm::tgamma(a), bm::tgamma(a) * bm::digamma(a))
SF1L(erf_l, bm::erf(a), 2 / sqrtl(PI) * expl(-a * a))
SF1L(bessel_j0_l, bm::cyl_bessel_j(0, a), -bm::cyl_bessel_j(1, a))
SF1L(lgamma_l, bm::lgamma(a), bm::digamma(a))
static void cyl_bessel_j_l()
{
    long double *x = dt_inl();
    dt_outl(bm::cyl_bessel_j(x[0], x[1]));
    dt_ref(0, 1, (double)bm::cyl_bessel_j_prime((long double)dt_raw[0], (long double)dt_raw[1]));
}

#define C(n) {#n, n}
static const struct dt_case cases[] = {
    C(tgamma), C(lgamma), C(digamma), C(trigamma), C(polygamma3), C(tgamma1pm1),
    C(erf), C(erfc), C(erf_inv), C(erfc_inv),
    C(bessel_j0), C(bessel_j1), C(bessel_y0), C(bessel_i0), C(bessel_k0), C(sph_bessel2),
    C(legendre_p5), C(legendre_p12), C(hermite5), C(laguerre4), C(chebyshev_t7),
    C(zeta), C(expint_ei), C(expint_e1), C(expint_e3), C(ellint_1c), C(ellint_2c),
    C(sinc_pi), C(log1p), C(expm1), C(cbrt), C(airy_ai), C(airy_bi), C(airy_ai_prime), C(lambert_w0),
    C(beta), C(tgamma_ratio), C(cyl_bessel_j), C(cyl_neumann), C(cyl_bessel_i), C(cyl_bessel_k),
    C(gamma_p), C(gamma_q), C(gamma_p_inv), C(ibeta), C(ibeta_inv), C(owens_t), C(jacobi_elliptic),
    C(ellint_1i), C(ellint_2i), C(hypot), C(powm1), C(hyperg_1f1),
    C(tgamma_f), C(erf_f), C(bessel_j0_f), C(tgamma_l), C(erf_l), C(bessel_j0_l), C(lgamma_l), C(cyl_bessel_j_l),
    {NULL, NULL}};
int main(int argc, char **argv) { return dt_main(argc, argv, cases); }
