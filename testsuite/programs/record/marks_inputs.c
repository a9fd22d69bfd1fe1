/* Marks N inputs x_i = 1 + i/N (DG_INPUTF) and one more with dgad_input,
 * outputs their product y, prints y. For the settings tests: run without
 * recording it must warn once and otherwise behave natively; recorded,
 * dy/dx_i = y / x_i. Usage: marks_inputs N (N <= 16) */
#include <dgad.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/derivgrind.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3;
    if (n < 0 || n > 16)
        return 2;
    double x[17], y = 1.0;
    for (int i = 0; i < n; i++) {
        x[i] = 1.0 + (double)i / n;
        DG_INPUTF(x[i]);
    }
    x[n] = 0.5;
    dgad_input(&x[n]);
    for (int i = 0; i <= n; i++)
        y *= x[i];
    DG_OUTPUTF(y);
    printf("%.17g\n", y);
    return 0;
}
