/* Derivatives of glibc's sin and log at many points, for scripts/plot_libm.py.
 *
 * Usage: libm_sweep [N]   (default 2000)
 *
 * Evaluates y = sin(x) at N points evenly spaced on [-10, 10] and y = log(x)
 * at N points evenly spaced on (0, 10] (x = 10 k / N, k = 1..N). Every x is
 * an AD input and every y an AD output, in the order printed: recorded once,
 * one reverse sweep with every output bar 1 gives input bar i = f'(x_i),
 * since y_i depends on x_i alone.
 *
 * Prints one line per point, "sin <x> <y>" or "log <x> <y>" (%.17g), in
 * input order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/derivgrind.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    if (n < 2) {
        fputs("libm_sweep: N must be at least 2\n", stderr);
        return 2;
    }
    double *x = malloc(sizeof(double) * 2 * (size_t)n);
    double *y = malloc(sizeof(double) * 2 * (size_t)n);
    if (!x || !y)
        return 2;
    for (int i = 0; i < n; i++) {
        x[i] = -10.0 + 20.0 * (double)i / (double)(n - 1);
        x[n + i] = 10.0 * (double)(i + 1) / (double)n;
    }
    for (int i = 0; i < 2 * n; i++)
        DG_INPUTF(x[i]);
    for (int i = 0; i < n; i++)
        y[i] = sin(x[i]);
    for (int i = 0; i < n; i++)
        y[n + i] = log(x[n + i]);
    for (int i = 0; i < 2 * n; i++)
        DG_OUTPUTF(y[i]);
    for (int i = 0; i < 2 * n; i++)
        printf("%s %.17g %.17g\n", i < n ? "sin" : "log", x[i], y[i]);
    free(x);
    free(y);
    return 0;
}
