/* Forward mode (DGAD_MODE=dot) on kernels of every instruction family the
 * rules cover: scalar and vectorised double arithmetic, division, sqrt,
 * FMA, min/max, sign tricks, float and long double (x87) arithmetic,
 * conversions, libm calls. x (argv[1]) is seeded with dot 1 and marked as
 * an input; each result is printed (stdout) and marked as an output, and
 * its tangent is printed on stderr as "dot NAME VALUE". Natively and in
 * record mode the dot requests do nothing (the tangents print as 0). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/derivgrind.h>

#define N 64

static void report(const char *name, double y, double dy) {
    printf("%s %.17g\n", name, y);
    fprintf(stderr, "dot %s %.17g\n", name, dy);
}

#define OUT(name, T, y)                                                       \
    do {                                                                      \
        T y_ = (y), d_ = 0;                                                   \
        DG_GET_DOTVALUE(&y_, &d_, sizeof(T));                                 \
        DG_OUTPUTF(y_);                                                       \
        report(name, (double)y_, (double)d_);                                 \
    } while (0)

static double a[N], b[N];

__attribute__((noinline)) static double dot_sum(double x) {
    double s = 0;
    for (int i = 0; i < N; i++) {
        a[i] = x * (0.5 * i);
        s += a[i];
    }
    return s;
}

__attribute__((noinline)) static double square_sum(double x) {
    double s = 0;
    for (int i = 0; i < N; i++)
        b[i] = x * x + i;
    for (int i = 0; i < N; i++)
        s += b[i] * b[i];
    return s;
}

__attribute__((noinline)) static double reciprocal_sum(double x) {
    double s = 0;
    for (int i = 0; i < N; i++)
        s += 1.0 / (x + i);
    return s;
}

__attribute__((noinline)) static float float_sum(float x) {
    float s = 0, v[N];
    for (int i = 0; i < N; i++)
        v[i] = x * x / (1.0f + x * (float)i);
    for (int i = 0; i < N; i++)
        s += v[i];
    return s;
}

int main(int argc, char **argv) {
    double x = argc > 1 ? atof(argv[1]) : 1.25;
    double one = 1.0;
    DG_INPUTF(x);
    DG_SET_DOTVALUE(&x, &one, sizeof x);
    OUT("poly", double, x * x * x - 2 * x);
    OUT("dot_sum", double, dot_sum(x));
    OUT("square_sum", double, square_sum(x));
    OUT("reciprocal_sum", double, reciprocal_sum(x));
    OUT("sin_exp", double, sin(x) * exp(x));
    OUT("pow", double, pow(x, 2.5));
    OUT("abs_copysign", double, fabs(-x) * copysign(x, -1.0));
    OUT("min_max", double, fmax(x, 0.5) + fmin(x, 10.0));
    OUT("fma", double, fma(x, x, x));
    OUT("int_part", double, (double)(int)(3 * x) * x);
    OUT("sqrt_div", double, sqrt(x) / (1 + x));
    float xf = (float)x;
    OUT("float_sum", float, float_sum(xf));
    OUT("float_libm", float, sinf(xf) * sqrtf(xf));
    long double xl = x;
    OUT("x87", long double, sqrtl(xl) * xl + 1.0L / xl);
    OUT("x87_libm", long double, expl(xl) * logl(xl));
    return 0;
}
