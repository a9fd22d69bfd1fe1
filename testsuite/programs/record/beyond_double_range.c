/* Partials beyond the range of doubles. y = (x·2^k)·2^-k = x in long double
 * (x87) arithmetic for any |k| < 16000, so dy/dx = 1; but the tape keeps
 * partials as doubles, and 2^k is one only up to k = 1023. Argument "x87 K":
 * that product with K; "ldexp K": z = ldexp(ldexp(x, -K), K) in double
 * (x tiny enough that both stay in range), the same with libm's scaling.
 * "div E": z = x/y with x = 10^(E+40), y = 10^E, both inputs: the partial
 * dz/dy = -x/y^2 is an ordinary number although y^2 over- or underflows for
 * |E| > 154. "pow 0": r = pow(x, 2.5) near the top of double's range (x =
 * 1.58e123, r = 9.9e307): dr/dx = 2.5 x^1.5 = 1.6e185, although 2.5 r
 * overflows. */
#include <dgad.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int k = atoi(argv[2]);
    if (strcmp(argv[1], "pow") == 0) {
        double x = 1.58e123;
        dgad_input(&x);
        double r = pow(x, 2.5);
        dgad_output(&r);
        printf("%.17g\n", r);
    } else if (strcmp(argv[1], "div") == 0) {
        double x = pow(10.0, k + 40), y = pow(10.0, k);
        dgad_input(&x);
        dgad_input(&y);
        double z = x / y;
        dgad_output(&z);
        printf("%.17g\n", z);
    } else if (strcmp(argv[1], "x87") == 0) {
        long double x = 1.3L;
        dgad_input_ldouble(&x);
        volatile long double up = ldexpl(1.0L, k), down = ldexpl(1.0L, -k);
        long double y = (x * up) * down;
        dgad_output_ldouble(&y);
        printf("%.17Lg\n", y);
    } else {
        double x = 1.3;
        dgad_input(&x);
        double z = ldexp(ldexp(x, -k), k);
        dgad_output(&z);
        printf("%.17g\n", z);
    }
    return 0;
}
