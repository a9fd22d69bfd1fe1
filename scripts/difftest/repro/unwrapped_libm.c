/* libm functions without a wrapper, differentiated as glibc's machine code:
 * significand, scalb, nextafter, the double complex catanh, casinh and the
 * long double complex clogl, cpowl; others as controls.  Each function is
 * one input (x = argv[1], default 1.3) and one output; ./expected gets the
 * central difference (h = 1e-5 x; float functions are only good to ~1e-3
 * that way).  argv[2] = k runs only function k (to attribute stderr lines).
 *
 *   gcc -O2 -I<dgad>/include unwrapped_libm.c -o unw -lm
 *   ./unw 1.3                          # natively: ./expected
 *   DGAD_RECORD=/tmp/unw LD_PRELOAD=<dgad>/target/release/libdgad.so ./unw 1.3
 *   python3 -c "import numpy as np; np.savetxt('/tmp/unw/dg-output-bars', np.eye(20))"
 *   <dgad>/target/release/dg-eval /tmp/unw     # diagonal of dg-input-bars vs ./expected */
#define _GNU_SOURCE
#include <dgad.h>
#include <math.h>
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>
typedef double (*F)(double);
static double f_significand(double x) { return significand(x); }
static double f_gamma(double x) { return gamma(x); }
static double f_drem(double x) { return drem(x, 0.7); }
static double f_scalb(double x) { return scalb(x, 3.0); }
static double f_nextafter(double x) { return nextafter(x, 10.0); }
static double f_exp10(double x) { return exp10(x); }
static double f_clogf(double x) { return crealf(clogf((float)x + 0.7f * I)); }
static double f_cpowl(double x) { return creall(cpowl((long double)x + 0.7L * I, 2.5L)); }
static double f_clogl(double x) { return creall(clogl((long double)x + 0.7L * I)); }
static double f_cexpf(double x) { return cimagf(cexpf((float)x + 0.7f * I)); }
static double f_catanh(double x) { return creal(catanh(x / 2 + 0.3 * I)); }
static double f_casinh(double x) { return creal(casinh(x + 0.3 * I)); }
static double f_cacos(double x) { return creal(cacos(x / 2 + 0.3 * I)); }
static double f_csinh(double x) { return creal(csinh(x + 0.3 * I)); }
static double f_ctan(double x) { return creal(ctan(x / 2 + 0.3 * I)); }
static double f_erfcl(double x) { return (double)erfcl(x); }
static double f_expm1f(double x) { return expm1f((float)x); }
static double f_log1pl(double x) { return (double)log1pl(x); }
static double f_lgammal(double x) { return (double)lgammal(x); }
static double f_powl(double x) { return (double)powl(x, 2.3L); }
static const struct { const char *n; F f; double tol; } T[] = {
  {"significand", f_significand, 1e-6}, {"gamma", f_gamma, 1e-6}, {"drem", f_drem, 1e-6}, {"scalb", f_scalb, 1e-6},
  {"nextafter", f_nextafter, 1e-6}, {"exp10", f_exp10, 1e-6}, {"clogf", f_clogf, 1e-3}, {"cpowl", f_cpowl, 1e-6},
  {"clogl", f_clogl, 1e-6}, {"cexpf", f_cexpf, 1e-3}, {"catanh", f_catanh, 1e-6}, {"casinh", f_casinh, 1e-6},
  {"cacos", f_cacos, 1e-6}, {"csinh", f_csinh, 1e-6}, {"ctan", f_ctan, 1e-6}, {"erfcl", f_erfcl, 1e-6},
  {"expm1f", f_expm1f, 1e-3}, {"log1pl", f_log1pl, 1e-6}, {"lgammal", f_lgammal, 1e-6}, {"powl", f_powl, 1e-6}};
int main(int argc, char **argv)
{
    double p = argc > 1 ? atof(argv[1]) : 1.3;
    FILE *e = fopen("expected", "w");
    for (unsigned i = 0; i < sizeof T / sizeof T[0]; i++) { if (argc > 2 && atoi(argv[2]) != (int)i) continue;
        double x = p; dgad_input(&x);
        double y = T[i].f(x); dgad_output(&y);
        double h = 1e-5 * p;
        fprintf(e, "%.17g %s\n", (T[i].f(p + h) - T[i].f(p - h)) / (2 * h), T[i].n);
    }
    fclose(e);
    return 0;
}
