/* With floating-point traps enabled (division by zero, invalid, overflow)
 * and rounding toward zero, records y1 = sqrt(a) at a = 0 (no exception
 * natively, but the partial 1/(2 sqrt a) divides by zero) and
 * y2 = b log b + sqrt(b) / (b + 1) at b = 2, then prints both, the
 * exception flags raised (natively none) and the rounding mode. dgad's
 * partials must neither trap nor leave flags behind.
 * Usage: fenv_traps A B */
#define _GNU_SOURCE
#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/derivgrind.h>

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    double a = atof(argv[1]), b = atof(argv[2]);
    DG_INPUTF(a);
    DG_INPUTF(b);
    feclearexcept(FE_ALL_EXCEPT);
    feenableexcept(FE_DIVBYZERO | FE_INVALID | FE_OVERFLOW);
    fesetround(FE_TOWARDZERO);
    double y1 = sqrt(a);
    double y2 = b * log(b) + sqrt(b) / (b + 1.0);
    int flags = fetestexcept(FE_DIVBYZERO | FE_INVALID | FE_OVERFLOW);
    int rounding = fegetround() == FE_TOWARDZERO;
    fedisableexcept(FE_ALL_EXCEPT);
    fesetround(FE_TONEAREST);
    DG_OUTPUTF(y1);
    DG_OUTPUTF(y2);
    printf("%.17g %.17g flags %d toward zero %d\n", y1, y2, flags, rounding);
    return 0;
}
