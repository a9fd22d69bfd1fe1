/* Control for finding 1: libgomp starts its threads at the first parallel
 * region, after takeover, so OpenMP code is differentiated on every thread.
 *   gcc -O2 -fopenmp -I<dgad>/include openmp_control.c -o omp -lm; OMP_NUM_THREADS=4 ... */
#include <dgad.h>
#include <math.h>
#include <stdio.h>
#define N 64
int main(void)
{
    static double x[N], y[N];
    for (int i = 0; i < N; i++) { x[i] = 0.1 + 0.01 * i; dgad_input(&x[i]); }
#pragma omp parallel for
    for (int i = 0; i < N; i++) y[i] = x[i] * x[i] * 3.0 + sin(x[i]);
    for (int i = 0; i < N; i++) dgad_output(&y[i]);
    FILE *e = fopen("expected", "w");
    for (int i = 0; i < N; i++) { double v = 0.1 + 0.01 * i; fprintf(e, "%.17g\n", 6 * v + cos(v)); }
    fclose(e);
    return 0;
}
