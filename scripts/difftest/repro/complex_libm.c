/* C99 complex functions of libm (cexp, clog, csqrt, cpow, csin, ...) are not
 * among the wrapped libm entry points: glibc's machine code runs under dgad
 * and is differentiated instruction by instruction, including the internal
 * __ieee754_log/__exp/__sincos it calls (table look-ups, bit tricks).
 * z = x + 0.7i with x = 1.3 marked; outputs Re f(z), Im f(z); expected
 * d/dx = f'(z) (holomorphic f), printed to ./expected.  cabs, carg: real.
 *
 *   gcc -O2 -I<dgad>/include complex_libm.c -o cl -lm
 *   DGAD_RECORD=/tmp/cl LD_PRELOAD=<dgad>/target/release/libdgad.so ./cl
 *   echo 1 > /tmp/cl/dg-input-dots; <dgad>/target/release/dg-eval --forward /tmp/cl
 *   paste /tmp/cl/dg-output-dots expected */
#include <dgad.h>
#include <complex.h>
#include <math.h>
#include <stdio.h>
static FILE *e;
static void out2(const char *name, double complex f, double complex fp)
{
    double re = creal(f), im = cimag(f);
    dgad_output(&re);
    dgad_output(&im);
    fprintf(e, "%.17g %s re\n%.17g %s im\n", creal(fp), name, cimag(fp), name);
}
static void out1(const char *name, double v, double d)
{
    dgad_output(&v);
    fprintf(e, "%.17g %s\n", d, name);
}
int main(void)
{
    double x = 1.3, y = 0.7;
    e = fopen("expected", "w");
    dgad_input(&x);
    double complex z = x + y * I;            /* built from the marked x */
    double complex zp = 1.3 + 0.7 * I;       /* passive copy for the references */
    out2("cexp", cexp(z), cexp(zp));
    out2("clog", clog(z), 1 / zp);
    out2("csqrt", csqrt(z), 0.5 / csqrt(zp));
    out2("cpow(z,2.5)", cpow(z, 2.5), 2.5 * cpow(zp, 1.5));
    out2("csin", csin(z), ccos(zp));
    out2("ccos", ccos(z), -csin(zp));
    out2("ctanh", ctanh(z), 1 / (ccosh(zp) * ccosh(zp)));
    out2("catan", catan(z), 1 / (1 + zp * zp));
    out2("z*z/(z+1) (arithmetic only)", z * z / (z + 1), (zp * zp + 2 * zp) / ((zp + 1) * (zp + 1)));
    out1("cabs", cabs(z), 1.3 / cabs(zp));
    out1("carg", carg(z), -0.7 / (1.3 * 1.3 + 0.7 * 0.7));
    fclose(e);
    return 0;
}
