/* dlopen libm, call cos through dlsym, dlclose, and do it again: a binary
 * translator must cope with the library's code going away and coming back
 * (possibly at a different address). */
#include <dlfcn.h>
#include <stdio.h>

typedef double (*unary_fn)(double);

static int round_trip(int round)
{
    void *handle = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        printf("round %d: dlopen failed: %s\n", round, dlerror());
        return 1;
    }
    unary_fn cos_fn = (unary_fn)dlsym(handle, "cos");
    unary_fn exp_fn = (unary_fn)dlsym(handle, "exp");
    if (!cos_fn || !exp_fn) {
        printf("round %d: dlsym failed\n", round);
        return 1;
    }
    double acc = 0;
    for (int i = 0; i < 1000; i++) {
        double x = i * 0.01 - 5.0;
        acc += cos_fn(x) * exp_fn(-x * x);
    }
    printf("round %d: cos(0)=%a cos(1)=%a cos(1e6)=%a acc=%a\n", round, cos_fn(0.0), cos_fn(1.0),
           cos_fn(1e6), acc);
    if (dlclose(handle) != 0) {
        printf("round %d: dlclose failed: %s\n", round, dlerror());
        return 1;
    }
    return 0;
}

int main(void)
{
    for (int round = 1; round <= 2; round++)
        if (round_trip(round))
            return 1;
    printf("END dlopen_libm\n");
    return 0;
}
