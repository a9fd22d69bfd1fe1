/* printf of doubles and floats in several formats over special values
 * (zeros, denormals, infinities, NaNs) and pseudo-random bit patterns.
 * The conversions run many floating-point and integer paths in glibc. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static double from_bits(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static void show(double d)
{
    printf("%g | %e | %a | %.17g | %f\n", d, d, d, d, d);
}

int main(void)
{
    const double specials[] = {
        0.0, -0.0, 1.0, -1.0, 0.1, 1.0 / 3, 2.0 / 3, 1e-5, 123456789.0, 1e21, 1e22, 1e23,
        DBL_MAX, -DBL_MAX, DBL_MIN, DBL_EPSILON, DBL_TRUE_MIN, -DBL_TRUE_MIN, DBL_MIN / 2,
        DBL_MIN - DBL_TRUE_MIN, 4.9406564584124654e-324 * 3, INFINITY, -INFINITY, NAN, -NAN,
        M_PI, M_E, 0.5, 1.5, 2.5, 0.125, 9007199254740993.0,
    };
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        show(specials[i]);

    for (int e = -320; e <= 308; e += 7)
        show(pow(10.0, e) * 1.2345678901234567);

    /* Raw bit patterns cover every exponent, denormals and NaN payloads. */
    uint64_t state = 0x123456789abcdef0ULL;
    for (int i = 0; i < 400; i++) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        show(from_bits(state));
    }

    for (int i = 0; i < 50; i++) {
        float f = (float)(i * 0.37) / 7.0f;
        printf("float %d: %.9g %a\n", i, f, f);
    }
    printf("widths: [%10.3f] [%-10.2e] [%+g] [% g] [%010.4f] [%#g]\n", M_PI, M_PI, M_PI, M_PI, -M_PI, 1.0);
    printf("END printf_doubles\n");
    return 0;
}
