/* Loops the compiler vectorises at -O3 (SSE, AVX2 or AVX-512 with
 * -march=native): saxpy/daxpy over 10^6 elements and dot products. Float
 * reductions are written with explicit partial sums because the vectoriser
 * may not reorder a plain sequential sum. Results print with %a so the exact
 * bits are compared. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1000000
#define LANES 16

static double dx[N], dy[N];
static float fx[N], fy[N];
static int32_t ix[N];

static double dot_d(const double *a, const double *b)
{
    double part[LANES] = { 0 };
    for (int i = 0; i < N; i += LANES)
        for (int j = 0; j < LANES; j++)
            part[j] += a[i + j] * b[i + j];
    double s = 0;
    for (int j = 0; j < LANES; j++)
        s += part[j];
    return s;
}

static float dot_f(const float *a, const float *b)
{
    float part[LANES] = { 0 };
    for (int i = 0; i < N; i += LANES)
        for (int j = 0; j < LANES; j++)
            part[j] += a[i + j] * b[i + j];
    float s = 0;
    for (int j = 0; j < LANES; j++)
        s += part[j];
    return s;
}

int main(void)
{
    for (int i = 0; i < N; i++) {
        dx[i] = (i % 1000) * 0.001 - 0.5;
        dy[i] = 1.0 / (1 + i % 97);
        fx[i] = (float)((i * 7) % 113) * 0.01f;
        fy[i] = (float)(i % 31) - 15.0f;
        ix[i] = (int32_t)((i * 2654435761u) >> 8);
    }

    for (int rep = 0; rep < 4; rep++) {
        double a = 0.5 + rep;
        for (int i = 0; i < N; i++)
            dy[i] = a * dx[i] + dy[i];
        float af = 0.25f * (rep + 1);
        for (int i = 0; i < N; i++)
            fy[i] = af * fx[i] + fy[i];
    }

    printf("ddot = %a\n", dot_d(dx, dy));
    printf("sdot = %a\n", (double)dot_f(fx, fy));

    double sequential = 0;
    for (int i = 0; i < N; i++)
        sequential += dy[i];
    printf("sequential dsum = %a\n", sequential);

    int64_t isum = 0;
    int32_t imax = INT32_MIN, imin = INT32_MAX;
    for (int i = 0; i < N; i++) {
        isum += ix[i];
        imax = ix[i] > imax ? ix[i] : imax;
        imin = ix[i] < imin ? ix[i] : imin;
    }
    printf("isum = %lld, imax = %d, imin = %d\n", (long long)isum, imax, imin);

    float fmaxv = -1e30f;
    for (int i = 0; i < N; i++)
        fmaxv = fy[i] > fmaxv ? fy[i] : fmaxv;
    printf("fmax = %a\n", (double)fmaxv);
    printf("END vector_sums\n");
    return 0;
}
