/* Derivgrind's recording example: read x, mark it, y = x*x*x, mark y.
 * Recorded, one bar of 1.0 on y gives dy/dx = 3x^2 in dg-input-bars. */
#include <stdio.h>
#include <valgrind/derivgrind.h>

int main(void)
{
    double x;
    if (scanf("%lf", &x) != 1) {
        fputs("derivgrind_cube: expected a number on stdin\n", stderr);
        return 2;
    }
    DG_INPUTF(x);
    double y = x * x * x;
    DG_OUTPUTF(y);
    printf("%.17g\n", y);
    return 0;
}
