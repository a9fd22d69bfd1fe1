/* Client requests under the real runtime (compiled at -O0 so that the
 * arithmetic stays between the requests that bracket it). Prints
 * "requests ok" when every check holds; the test then checks the recorded
 * derivative: y = (x*x + x) + [x*x + x, not recorded] + x*x + 3*u, where
 * u = NEW_INDEX-made copy of x with partial 3, so dy/dx = 4x + 1 + 3. */
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/derivgrind.h>

static int failures;
#define CHECK(c)                                                                         \
    do {                                                                                 \
        if (!(c)) {                                                                      \
            printf("WRONG %s:%d: %s\n", __FILE__, __LINE__, #c);                         \
            failures++;                                                                  \
        }                                                                                \
    } while (0)

int main(int argc, char **argv)
{
    double x = argc > 1 ? atof(argv[1]) : 1.5;
    CHECK(DG_GET_MODE == 'b');
    DG_INPUTF(x);
    unsigned long long ix = 0, iu = 0, zero = 0, none = 0;
    double three = 3.0, nothing = 0.0;
    CHECK(DG_GET_INDEX(&x, &ix) == 1);
    CHECK(ix != 0);

    double a = x * x + x;
    unsigned long long prev = DG_DISABLE(1, 0);
    CHECK(prev == 0);
    double b = x * x + x;
    unsigned long long ib = 99;
    DG_GET_INDEX(&b, &ib);
    CHECK(ib == 0);
    DG_DISABLE(0, 1);
    double c = x * x;

    /* u: a new value whose derivative is 3 dx, made by NEW_INDEX. */
    double u = x;
    CHECK(DG_NEW_INDEX(&ix, &zero, &three, &nothing, &iu, &u) == 1);
    CHECK(iu > ix);
    DG_SET_INDEX(&u, &iu);
    /* Passive operands and activity analysis: no block, index 0. */
    unsigned long long passive = 7;
    DG_NEW_INDEX(&zero, &none, &three, &nothing, &passive, &u);
    CHECK(passive == 0);

    double y = a + b + c + u;
    DG_OUTPUTF(y);
    printf("y %.17g\n", y);
    printf(failures ? "requests WRONG\n" : "requests ok\n");
    return failures != 0;
}
