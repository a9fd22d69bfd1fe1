/* x87 extended precision: long double loops whose results depend on the
 * 64-bit mantissa and on x87-only instructions (fsqrt, fsin via sinl, fyl2x
 * via logl). %La prints the exact bits. */
#include <float.h>
#include <math.h>
#include <stdio.h>

int main(void)
{
    printf("LDBL_MANT_DIG=%d\n", LDBL_MANT_DIG);

    long double zeta2 = 0;
    for (long k = 1; k <= 200000; k++)
        zeta2 += 1.0L / ((long double)k * k);
    printf("sum 1/k^2 = %.21Lf = %La\n", zeta2, zeta2);

    long double e = 1, term = 1;
    for (int k = 1; k < 30; k++) {
        term /= k;
        e += term;
    }
    printf("e         = %.21Lf = %La\n", e, e);

    long double x = 2;
    for (int i = 0; i < 6; i++)
        x = (x + 2 / x) / 2;
    printf("newton sqrt2 = %La, sqrtl(2) = %La\n", x, sqrtl(2.0L));

    long double harmonic = 0;
    for (int k = 1000000; k >= 1; k--)
        harmonic += 1.0L / k;
    printf("H(1e6) - ln(1e6) = %.21Lf\n", harmonic - logl(1000000.0L));

    long double s = 0;
    for (int i = 0; i < 100; i++)
        s += sinl(i * 0.1L) * cosl(i * 0.2L) + expl(-i * 0.05L);
    printf("trig sum = %La\n", s);

    /* Tiny values: extended precision has a wider exponent range than double. */
    long double tiny = 1;
    int halvings = 0;
    while (tiny / 2 > 0) {
        tiny /= 2;
        halvings++;
    }
    printf("halvings to the smallest long double: %d, value %La\n", halvings, tiny);

    long double big = 1e4000L;
    printf("1e4000L = %Le, as double = %g\n", big, (double)big);
    printf("rounding: %.0Lf %.0Lf %.0Lf\n", 0.5L, 1.5L, 2.5L);
    printf("END x87_long_double\n");
    return 0;
}
