/* Record-mode benchmark kernel: an explicit 2-D heat stencil on an N x N grid
 * for STEPS steps. AD inputs: every value of the initial state; AD output:
 * the Euclidean norm of the final state. Usage: record_kernel [N [STEPS]].
 * Prints the norm and the number of arithmetic operations on active data it
 * performs (for tape bytes per operation). Under dgad's forward mode
 * (DGAD_MODE=dot) every initial value also gets dot value 1
 * (DG_SET_DOTVALUE) and the norm's dot value, its derivative along all-ones,
 * is printed on stderr as `record_kernel: dot <value>`; natively and in
 * record mode nothing of this happens. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/derivgrind.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 64;
    int steps = argc > 2 ? atoi(argv[2]) : 50;
    double *a = malloc(sizeof(double) * (size_t)n * (size_t)n);
    double *b = malloc(sizeof(double) * (size_t)n * (size_t)n);
    if (!a || !b || n < 3 || steps < 1)
        return 2;
    const int dot_mode = DG_GET_MODE == 'd';
    const double one = 1.0;
    for (int i = 0; i < n * n; i++) {
        a[i] = b[i] = 1.0 + 0.5 * (double)((i * 7919) % 1000) / 1000.0;
        DG_INPUTF(a[i]);
        if (dot_mode)
            DG_SET_DOTVALUE(&a[i], &one, sizeof a[i]);
        b[i] = a[i];
    }
    for (int s = 0; s < steps; s++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                b[i * n + j] = a[i * n + j]
                    + 0.2 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]
                             - 4.0 * a[i * n + j]);
        double *t = a;
        a = b;
        b = t;
    }
    double sum = 0;
    for (int i = 0; i < n * n; i++)
        sum += a[i] * a[i];
    double norm = sqrt(sum);
    DG_OUTPUTF(norm);
    long ops = (long)steps * (n - 2) * (n - 2) * 7 + (long)n * n * 2 + 1;
    printf("norm %.17g\nactive operations %ld\n", norm, ops);
    if (dot_mode) {
        double dot = 0.0;
        DG_GET_DOTVALUE(&norm, &dot, sizeof dot);
        fprintf(stderr, "record_kernel: dot %.17g\n", dot);
    }
    return 0;
}
