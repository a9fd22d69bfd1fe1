/* The gradient example: a function of three inputs with two outputs.
 *
 *   cc -O3 -I<dgad>/include readme_gradient.c -o readme_gradient -lm
 *   DGAD_RECORD=/tmp/run LD_PRELOAD=<dgad>/libdgad.so ./readme_gradient 1.5 -0.75 2
 *   printf '1.0\n0.0\n' > /tmp/run/dg-output-bars   # seed f0
 *   dg-eval /tmp/run                                # gradient of f0 in dg-input-bars
 *
 * The derivative tests run it on every C axis and compare both sweeps with
 * finite differences of native runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/derivgrind.h>

static void model(const double x[3], double f[2])
{
    f[0] = x[0] * x[1] + x[1] * x[2] * x[2] - x[0] / x[2];
    f[1] = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fputs("usage: readme_gradient X0 X1 X2\n", stderr);
        return 2;
    }
    double x[3], f[2];
    for (int i = 0; i < 3; i++) {
        x[i] = strtod(argv[1 + i], NULL);
        DG_INPUTF(x[i]);
    }
    model(x, f);
    for (int k = 0; k < 2; k++) {
        DG_OUTPUTF(f[k]);
        printf("%.17g\n", f[k]);
    }
    return 0;
}
