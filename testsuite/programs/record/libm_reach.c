/* libm reached without a direct call: through dlopen/dlsym, through a
 * function pointer, and a long double function through dlsym. Each result
 * must carry the analytic derivative (the interception is by address).
 * Usage: libm_reach X; prints sin x, cos x, exp x. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/derivgrind.h>

typedef double (*unary)(double);

/* Opaque to the optimiser: the call below must go through the pointer. */
static unary volatile chosen = cos;

int main(int argc, char **argv)
{
    if (argc != 2) {
        fputs("usage: libm_reach X\n", stderr);
        return 2;
    }
    double x = strtod(argv[1], NULL);
    DG_INPUTF(x);
    void *libm = dlopen("libm.so.6", RTLD_NOW);
    if (!libm) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    unary sin_ptr = (unary)dlsym(libm, "sin");
    long double (*expl_ptr)(long double) = (long double (*)(long double))dlsym(libm, "expl");
    double s = sin_ptr(x);
    double c = chosen(x);
    double e = (double)expl_ptr((long double)x);
    DG_OUTPUTF(s);
    DG_OUTPUTF(c);
    DG_OUTPUTF(e);
    printf("%.17g\n%.17g\n%.17g\n", s, c, e);
    dlclose(libm);
    return 0;
}
