/* OpenBLAS worker threads run natively under dgad: the part of a BLAS/LAPACK
 * call that OpenBLAS hands to its worker thread loses its derivatives,
 * silently.  y = A x with cblas_dgemv (n = 96: OpenBLAS splits the rows
 * between its 2 threads on a 2-CPU machine); inputs x, outputs y;
 * dy_i/dx_j = A_ij.  Prints dy_i/dx_0 expected; compare with dg-eval.
 *
 *   gcc -O2 -I<dgad>/include -I/usr/include/x86_64-linux-gnu/openblas-pthread \
 *       openblas_threads.c -o ob -L/usr/lib/x86_64-linux-gnu/openblas-pthread -lopenblas
 *   DGAD_RECORD=/tmp/ob LD_PRELOAD=<dgad>/target/release/libdgad.so ./ob
 *   echo 1 > /tmp/ob/dg-input-dots; for i in $(seq 95); do echo 0 >> /tmp/ob/dg-input-dots; done
 *   <dgad>/target/release/dg-eval --forward /tmp/ob   # dg-output-dots: column 0 of A
 * With OPENBLAS_NUM_THREADS=1 every entry is right; with the default the
 * rows OpenBLAS gives its worker thread come out 0 (nothing on stderr). */
#include <dgad.h>
#include <cblas.h>
#include <stdio.h>
#define N 96
int main(void)
{
    static double A[N * N], x[N], y[N];
    for (int i = 0; i < N * N; i++) A[i] = (double)((i * 7919) % 101) / 50.0 - 1.0;
    for (int j = 0; j < N; j++) { x[j] = 0.01 * j; dgad_input(&x[j]); }
    cblas_dgemv(CblasRowMajor, CblasNoTrans, N, N, 1.0, A, N, x, 1, 0.0, y, 1);
    for (int i = 0; i < N; i++) dgad_output(&y[i]);
    FILE *f = fopen("expected-dots", "w");
    for (int i = 0; i < N; i++) fprintf(f, "%.17g\n", A[i * N]);
    fclose(f);
    return 0;
}
