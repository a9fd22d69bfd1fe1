/* Shared helpers of the difftest clients.
 *
 * Protocol: `client CASE INFILE`.  INFILE holds the input vector (numbers
 * separated by white space).  The client marks every input (dgad_input),
 * computes, marks every output (dgad_output) and prints it as `y %.17g`.
 * With DT_REF=1 in the environment (native runs only) it also prints the
 * analytic Jacobian entries it knows as `J i j value`.  Natively the marks
 * are no-ops (the driver's finite-difference runs are native). */
#ifndef DT_H
#define DT_H
#include <dgad.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int dt_n;
static double *dt_raw;
static int dt_ref_on;

static void dt_load(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) { perror(path); exit(2); }
    int cap = 16;
    dt_raw = (double *)malloc(cap * sizeof(double));
    double v;
    while (fscanf(f, "%lf", &v) == 1) {
        if (dt_n == cap) { cap *= 2; dt_raw = (double *)realloc(dt_raw, cap * sizeof(double)); }
        dt_raw[dt_n++] = v;
    }
    fclose(f);
    dt_ref_on = getenv("DT_REF") && atoi(getenv("DT_REF"));
}
/* The inputs as marked doubles (a fresh copy). */
static double *dt_in(void)
{
    double *x = (double *)malloc((dt_n + 1) * sizeof(double));
    for (int i = 0; i < dt_n; i++) { x[i] = dt_raw[i]; dgad_input_double(&x[i]); }
    return x;
}
static float *dt_inf(void)
{
    float *x = (float *)malloc((dt_n + 1) * sizeof(float));
    for (int i = 0; i < dt_n; i++) { x[i] = (float)dt_raw[i]; dgad_input_float(&x[i]); }
    return x;
}
static long double *dt_inl(void)
{
    long double *x = (long double *)malloc((dt_n + 1) * sizeof(long double));
    for (int i = 0; i < dt_n; i++) { x[i] = dt_raw[i]; dgad_input_ldouble(&x[i]); }
    return x;
}
static void dt_out(double y) { dgad_output_double(&y); printf("y %.17g\n", y); }
static void dt_outf(float y) { dgad_output_float(&y); printf("y %.9g\n", (double)y); }
static void dt_outl(long double y) { dgad_output_ldouble(&y); printf("y %.21Lg\n", y); }
static void dt_outv(const double *y, int m) { for (int i = 0; i < m; i++) dt_out(y[i]); }
static void dt_outvf(const float *y, int m) { for (int i = 0; i < m; i++) dt_outf(y[i]); }
static void dt_ref(int i, int j, double v) { if (dt_ref_on) printf("J %d %d %.17g\n", i, j, v); }

typedef void (*dt_fn)(void);
struct dt_case { const char *name; dt_fn fn; };
static int dt_main(int argc, char **argv, const struct dt_case *cases)
{
    if (argc < 3) { fprintf(stderr, "usage: %s CASE INFILE\n", argv[0]); return 2; }
    dt_load(argv[2]);
    for (const struct dt_case *c = cases; c->name; c++)
        if (!strcmp(c->name, argv[1])) { c->fn(); fflush(stdout); return 0; }
    fprintf(stderr, "unknown case %s\n", argv[1]);
    return 2;
}
#endif
