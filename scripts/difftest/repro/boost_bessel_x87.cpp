// Boost.Math Bessel functions of non-integer order through the default policy,
// which computes a double function in long double (promote_double<true>, x87):
// the continued fractions CF1_ik/CF1_jy start Lentz's method with
// tiny = sqrt(min_value<long double>()) ~ 1.8e-2466 and bessel_jy scales its
// backward recurrence by the same number, so intermediates and partials leave
// double's range (FINDINGS #11, repro/x87_range.c). With promote_double<false>
// (tiny = sqrt(DBL_MIN), in range) the same functions are right. Silent.
// One input/output per line; ./expected: Boost's documented derivative (*_prime).
//   g++ -O2 -I<dgad>/include boost_bessel_x87.cpp -o bb        (libboost-math-dev)
//   ./bb > expected
//   DGAD_RECORD=/tmp/bb LD_PRELOAD=<dgad>/target/release/libdgad.so ./bb > /dev/null
//   python3 -c "import numpy as np; np.savetxt('/tmp/bb/dg-output-bars', np.eye(8))"
//   <dgad>/target/release/dg-eval /tmp/bb    # diagonal of dg-input-bars vs ./expected
#include <dgad.h>
#include <boost/math/special_functions/bessel.hpp>
#include <boost/math/special_functions/bessel_prime.hpp>
#include <cstdio>
namespace bm = boost::math;
typedef bm::policies::policy<bm::policies::promote_double<false>> nopromote;
typedef double (*F)(double);
static double i_ld(double x) { return bm::cyl_bessel_i(0.3, x); }
static double i_d(double x) { return bm::cyl_bessel_i(0.3, x, nopromote()); }
static double y_ld(double x) { return bm::cyl_neumann(0.6, x); }
static double y_d(double x) { return bm::cyl_neumann(0.6, x, nopromote()); }
static double ip(double x) { return bm::cyl_bessel_i_prime(0.3, x); }
static double yp(double x) { return bm::cyl_neumann_prime(0.6, x); }
static const struct { const char *n; F f, d; double x; } T[] = {
    {"cyl_bessel_i(0.3,x) long double", i_ld, ip, 1.3}, {"cyl_bessel_i(0.3,x) double", i_d, ip, 1.3},
    {"cyl_bessel_i(0.3,x) long double", i_ld, ip, 7.5}, {"cyl_bessel_i(0.3,x) double", i_d, ip, 7.5},
    {"cyl_neumann(0.6,x) long double", y_ld, yp, 2.2}, {"cyl_neumann(0.6,x) double", y_d, yp, 2.2},
    {"cyl_neumann(0.6,x) long double", y_ld, yp, 9.0}, {"cyl_neumann(0.6,x) double", y_d, yp, 9.0}};
int main()
{
    for (auto &t : T) {
        double x = t.x; dgad_input(&x);
        double y = t.f(x); dgad_output(&y);
        printf("%.17g %s at x=%g\n", t.d(t.x), t.n, t.x);
    }
    return 0;
}
