/* Derivgrind's forward-mode pattern: read x, seed its dot value with 1,
 * y = x*x*x, print y and its dot value (3x^2). Natively and in record mode
 * the dot value prints as 0. */
#include <stdio.h>
#include <valgrind/derivgrind.h>

int main(void)
{
    double x, dx = 1.0, dy = 0.0;
    if (scanf("%lf", &x) != 1)
        return 2;
    DG_SET_DOTVALUE(&x, &dx, sizeof x);
    double y = x * x * x;
    DG_GET_DOTVALUE(&y, &dy, sizeof y);
    printf("%.17g %.17g\n", y, dy);
    return 0;
}
