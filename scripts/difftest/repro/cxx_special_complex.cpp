// C++17 special functions (libstdc++, compiled into the program: all right)
// and std::complex log/pow/atanh (libm clog/cpow/catanh, not wrapped: wrong,
// silently; at x = 3.7 std::log(complex) gives 0). One input/output per
// function; ./expected: central differences (run natively first).
//   g++ -std=c++17 -O2 -I<dgad>/include cxx_special_complex.cpp -o cx
//   ./cx 3.7 && mv expected expected.native
//   DGAD_RECORD=/tmp/cx LD_PRELOAD=<dgad>/target/release/libdgad.so ./cx 3.7
//   python3 -c "import numpy as np; np.savetxt(\"/tmp/cx/dg-output-bars\", np.eye(20))"
//   <dgad>/target/release/dg-eval /tmp/cx    # diagonal of dg-input-bars vs expected.native
#include <dgad.h>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
typedef double (*F)(double);
static double f_cylj(double x) { return std::cyl_bessel_j(1.5, x); }
static double f_cyln(double x) { return std::cyl_neumann(0.5, x); }
static double f_cyli(double x) { return std::cyl_bessel_i(1.0, x); }
static double f_cylk(double x) { return std::cyl_bessel_k(0.3, x); }
static double f_sphj(double x) { return std::sph_bessel(2, x); }
static double f_expint(double x) { return std::expint(x); }
static double f_zeta(double x) { return std::riemann_zeta(x + 1.7); }
static double f_ellk(double x) { return std::comp_ellint_1(x / 5); }
static double f_elle(double x) { return std::comp_ellint_2(x / 5); }
static double f_ellf(double x) { return std::ellint_1(0.4, x); }
static double f_legendre(double x) { return std::legendre(5, x / 5); }
static double f_assoc_leg(double x) { return std::assoc_legendre(4, 2, x / 5); }
static double f_hermite(double x) { return std::hermite(5, x); }
static double f_laguerre(double x) { return std::laguerre(4, x); }
static double f_beta(double x) { return std::beta(x, 1.7); }
static double f_sph_leg(double x) { return std::sph_legendre(3, 1, x); }
static double f_clog(double x) { return std::log(std::complex<double>(x, 0.7)).real(); }
static double f_cpow(double x) { return std::pow(std::complex<double>(x, 0.7), 2.5).real(); }
static double f_csqrt(double x) { return std::sqrt(std::complex<double>(x, 0.7)).imag(); }
static double f_catanh(double x) { return std::atanh(std::complex<double>(x / 2, 0.3)).real(); }
static const struct { const char *n; F f; } T[] = {
  {"cyl_bessel_j", f_cylj}, {"cyl_neumann", f_cyln}, {"cyl_bessel_i", f_cyli}, {"cyl_bessel_k", f_cylk},
  {"sph_bessel", f_sphj}, {"expint", f_expint}, {"riemann_zeta", f_zeta}, {"comp_ellint_1", f_ellk},
  {"comp_ellint_2", f_elle}, {"ellint_1", f_ellf}, {"legendre", f_legendre}, {"assoc_legendre", f_assoc_leg},
  {"hermite", f_hermite}, {"laguerre", f_laguerre}, {"beta", f_beta}, {"sph_legendre", f_sph_leg},
  {"std::log(complex)", f_clog}, {"std::pow(complex,2.5)", f_cpow}, {"std::sqrt(complex)", f_csqrt}, {"std::atanh(complex)", f_catanh}};
int main(int argc, char **argv)
{
    double p = argc > 1 ? atof(argv[1]) : 1.3;
    FILE *e = fopen("expected", "w");
    for (auto &t : T) {
        double x = p; dgad_input(&x);
        double y = t.f(x); dgad_output(&y);
        double h = 1e-6 * p;
        fprintf(e, "%.17g %s\n", (t.f(p + h) - t.f(p - h)) / (2 * h), t.n);
    }
    fclose(e);
    return 0;
}
