/* A statically linked client (issue 19, decision 45): three inputs from
 * the command line, two outputs through libm functions that the static
 * image carries itself (sin and atan2 are IFUNCs reached through PLT
 * stubs in a static glibc, exp, pow, log, cbrt and tanh plain functions).
 *   f0 = sin(x0) exp(x1) + pow(x0, x2) + atan2(x1, x2)
 *   f1 = log(x2) cbrt(x0) + tanh(x1) x0
 * Marked with Derivgrind's client requests, so record, grad, jacobian and
 * dot all apply. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/derivgrind.h>

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s x0 x1 x2\n", argv[0]);
        return 2;
    }
    double x[3];
    for (int i = 0; i < 3; i++) {
        x[i] = strtod(argv[i + 1], 0);
        DG_INPUTF(x[i]);
    }
    double f0 = sin(x[0]) * exp(x[1]) + pow(x[0], x[2]) + atan2(x[1], x[2]);
    double f1 = log(x[2]) * cbrt(x[0]) + tanh(x[1]) * x[0];
    DG_OUTPUTF(f0);
    DG_OUTPUTF(f1);
    printf("%.17g %.17g\n", f0, f1);
    return 0;
}
