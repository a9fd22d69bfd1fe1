/* libm / plain C formulas on 8 inputs, compiled with gcc and clang at
 * -O0, -O3 -march=native and -ffast-math: loops the compiler vectorises
 * (libmvec calls with -ffast-math), reductions, long double. */
#include "dt.h"
#define N 8
static void poly_d(void)
{
    double *x = dt_in(), y[N];
    for (int i = 0; i < N; i++) y[i] = ((0.3 * x[i] - 1.2) * x[i] + 0.7) * x[i] * x[i] + 1.0 / x[i];
    dt_outv(y, N);
}
static void poly_f(void)
{
    float *x = dt_inf(), y[N];
    for (int i = 0; i < N; i++) y[i] = ((0.3f * x[i] - 1.2f) * x[i] + 0.7f) * x[i] * x[i] + 1.0f / x[i];
    dt_outvf(y, N);
}
static void poly_l(void)
{
    long double *x = dt_inl();
    for (int i = 0; i < N; i++) dt_outl(((0.3L * x[i] - 1.2L) * x[i] + 0.7L) * x[i] * x[i] + 1.0L / x[i]);
}
static void vecexp_d(void)
{
    double *x = dt_in(), y[N];
    for (int i = 0; i < N; i++) y[i] = exp(x[i]) * sin(x[i]) + log(x[i]) * cos(2 * x[i]);
    dt_outv(y, N);
}
static void vecexp_f(void)
{
    float *x = dt_inf(), y[N];
    for (int i = 0; i < N; i++) y[i] = expf(x[i]) * sinf(x[i]) + logf(x[i]) * cosf(2 * x[i]);
    dt_outvf(y, N);
}
static void norm_d(void)
{
    double *x = dt_in(), s = 0, m = 0;
    for (int i = 0; i < N; i++) { s += x[i] * x[i]; m = fmax(m, fabs(x[i] - 1.0)); }
    dt_out(sqrt(s));
    dt_out(m);
}
static void softmax_d(void)
{
    double *x = dt_in(), y[N], mx = x[0], s = 0;
    for (int i = 1; i < N; i++) mx = x[i] > mx ? x[i] : mx;
    for (int i = 0; i < N; i++) { y[i] = exp(x[i] - mx); s += y[i]; }
    for (int i = 0; i < N; i++) y[i] /= s;
    dt_outv(y, N);
}
static void softmax_f(void)
{
    float *x = dt_inf(), y[N], mx = x[0], s = 0;
    for (int i = 1; i < N; i++) mx = x[i] > mx ? x[i] : mx;
    for (int i = 0; i < N; i++) { y[i] = expf(x[i] - mx); s += y[i]; }
    for (int i = 0; i < N; i++) y[i] /= s;
    dt_outvf(y, N);
}
static void mixed_l(void)
{
    long double *x = dt_inl();
    for (int i = 0; i < N; i++) dt_outl(expl(x[i]) / (1 + x[i] * x[i]) + atanl(x[i]) * sqrtl(x[i]) + powl(x[i], 1.7L));
}
static void atan2hyp_d(void)
{
    double *x = dt_in(), y[N];
    for (int i = 0; i < N; i++) y[i] = atan2(x[i], x[(i + 1) % N] - 1.0) + hypot(x[i], 0.5) + tanh(x[i]) * erf(x[i]);
    dt_outv(y, N);
}
static void powlog_f(void)
{
    float *x = dt_inf(), y[N];
    for (int i = 0; i < N; i++) y[i] = powf(x[i], 1.3f) + log1pf(x[i]) * sqrtf(x[i]) + cbrtf(x[i]);
    dt_outvf(y, N);
}
static const struct dt_case cases[] = {
    {"poly_d", poly_d}, {"poly_f", poly_f}, {"poly_l", poly_l}, {"vecexp_d", vecexp_d}, {"vecexp_f", vecexp_f},
    {"norm_d", norm_d}, {"softmax_d", softmax_d}, {"softmax_f", softmax_f}, {"mixed_l", mixed_l},
    {"atan2hyp_d", atan2hyp_d}, {"powlog_f", powlog_f}, {NULL, NULL}};
int main(int argc, char **argv) { return dt_main(argc, argv, cases); }
