/* 2-D Jacobi heat stencil: the CPU-bound kernel of the suite, also used as a
 * benchmark. Usage: stencil [N [STEPS]]; the default (N=1024, STEPS=800)
 * takes about half a second natively at -O3. Tests pass a small N. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1024;
    int steps = argc > 2 ? atoi(argv[2]) : 800;
    if (n < 8 || steps < 1) {
        fprintf(stderr, "usage: %s [N>=8 [STEPS>=1]]\n", argv[0]);
        return 2;
    }
    double *a = malloc(sizeof(double) * (size_t)n * (size_t)n);
    double *b = malloc(sizeof(double) * (size_t)n * (size_t)n);
    if (!a || !b) {
        perror("malloc");
        return 1;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double v = 0;
            if (i == 0)
                v = 100.0;
            else if (j == 0)
                v = 50.0 * i / n;
            a[(size_t)i * n + j] = b[(size_t)i * n + j] = v;
        }
    for (int s = 0; s < steps; s++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++) {
                size_t k = (size_t)i * n + j;
                b[k] = 0.25 * (a[k - 1] + a[k + 1] + a[k - n] + a[k + n]);
            }
        double *t = a;
        a = b;
        b = t;
    }
    double sum = 0, corner = a[(size_t)1 * n + 1], near_edge = a[(size_t)5 * n + 5];
    for (size_t k = 0; k < (size_t)n * n; k++)
        sum += a[k];
    printf("n=%d steps=%d\n", n, steps);
    printf("sum=%a corner=%a near_edge=%a\n", sum, corner, near_edge);
    printf("sum=%.10f\n", sum);
    free(a);
    free(b);
    printf("END stencil\n");
    return 0;
}
