/* long double (x87) intermediates outside double's exponent range (FINDINGS #11).
 * y_k = (x * 2^k) * 2^-k = x exactly in long double (|k| < 16000), so dy/dx = 1
 * for every k; the products' partials are 2^k and 2^-k. dgad: 1 while both
 * partials are doubles (|k| <= 1023; 2^-1074 is a subnormal double), inf for
 * k = 1024..1074 (2^k is inf as a double), 0 from k = 1075 on (2^-k rounds to 0
 * as a double and the second product comes out passive), the same for -k; no
 * message; record mode (dg-eval both ways) and dot mode alike.
 * Last output: the first step of Lentz's method as Boost.Math's Bessel continued
 * fractions take it (tiny = sqrt(LDBL_MIN) ~ 1.8e-2466, C = b + 1/tiny ~ 5e2465):
 * f = tiny * ((b + 1/tiny) * (1/b)) = tiny + x/2.6 with b = 2.6/x, y = f * x:
 * dy/dx = 2x/2.6 + tiny = 1 at x = 1.3; dgad 0.5 (f passive, only y's partial f).
 *   gcc -O2 -I<dgad>/include x87_range.c -o xr
 *   DGAD_RECORD=/tmp/xr LD_PRELOAD=<dgad>/target/release/libdgad.so ./xr > expected
 *   echo 1 > /tmp/xr/dg-input-dots; <dgad>/target/release/dg-eval --forward /tmp/xr
 *   paste /tmp/xr/dg-output-dots expected */
#include <dgad.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
static const int K[] = {0, 500, 1000, 1020, 1023, 1024, 1030, 1060, 1074, 1075, 1100, 2000, -1000, -1023, -1024, -1074, -1075, -1100, -2000};
int main(void)
{
    long double x = 1.3L;
    dgad_input_ldouble(&x);
    for (unsigned i = 0; i < sizeof K / sizeof K[0]; i++) {
        volatile long double up = ldexpl(1.0L, K[i]), down = ldexpl(1.0L, -K[i]);
        long double y = (x * up) * down;
        dgad_output_ldouble(&y);
        printf("1 k=%d\n", K[i]);
    }
    volatile long double tiny = sqrtl(LDBL_MIN);
    long double b = 2.6L / x, f = tiny * ((b + 1 / tiny) * (1 / b)), y = f * x;
    dgad_output_ldouble(&y);
    printf("%.17Lg lentz_step*x\n", 2 * 1.3L / 2.6L + tiny);
    return 0;
}
