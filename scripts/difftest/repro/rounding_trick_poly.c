/* The rounding-trick rule ("x + C with |C| >= 2^52 rounds x to an integer:
 * a staircase, derivative 0") also fires on a polynomial's large constant
 * term, whose sum is an ordinary value: scipy.special.j0 (cephes/xsf:
 * P(z) = ((RP0 z + RP1) z + RP2) z + RP3, RP3 = 9708622510473064.0) loses
 * dP/dz silently.  Every output here has dy/dx = 1e15 (double) or 1e6
 * (float); the program prints the expected values.
 *
 *   gcc -O2 -I<dgad>/include rounding_trick_poly.c -o rt
 *   DGAD_RECORD=/tmp/rt LD_PRELOAD=<dgad>/target/release/libdgad.so ./rt
 *   echo 1 > /tmp/rt/dg-input-dots; <dgad>/target/release/dg-eval --forward /tmp/rt
 *   paste /tmp/rt/dg-output-dots expected   (run.sh does this) */
#include <dgad.h>
#include <stdio.h>
static volatile double C[] = {9708622510473064.0, 6755399441055744.0 /* 1.5*2^52 */, 4503599627370496.0 /* 2^52 */,
                              1e17, -9708622510473064.0, 1e12};
static volatile float CF[] = {9708623.0f, 12582912.0f /* 1.5*2^23 */, 1e9f, 1e4f};
int main(void)
{
    double x = -2.21;
    float xf = -2.21f;
    dgad_input(&x);
    dgad_input(&xf);
    FILE *e = fopen("expected", "w");
    for (unsigned i = 0; i < sizeof C / sizeof C[0]; i++) {
        double y = x * 1e15 + C[i];   /* |x*1e15| ~ 2.2e15: y is far from C, nothing is rounded away */
        dgad_output(&y);
        fprintf(e, "1e15 (x*1e15 + %.17g)\n", C[i]);
    }
    for (unsigned i = 0; i < sizeof CF / sizeof CF[0]; i++) {
        float y = xf * 1e6f + CF[i];
        dgad_output(&y);
        fprintf(e, "0 (d/dx of the float output) ; d/dxf = 1e6 (xf*1e6f + %.9g)\n", (double)CF[i]);
    }
    fclose(e);
    return 0;
}
