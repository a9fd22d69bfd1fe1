/* With floating-point traps enabled, libm functions that raise an
 * exception the program unmasked (sqrt(-1): invalid; log(0): division by
 * zero), in double and long double, deliver SIGFPE to the program's
 * handler, as natively. The libm
 * stand-ins of record mode run the real function inside the runtime, where
 * the trap stopped the program with an internal error (exit 125). A call
 * that raises nothing is recorded as usual. Usage: libm_traps X; prints
 * what each call did and y = sqrt(x). */
#define _GNU_SOURCE
#include <fenv.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/derivgrind.h>

static sigjmp_buf back;

static void on_fpe(int sig, siginfo_t *info, void *uc)
{
    (void)sig;
    (void)uc;
    printf("SIGFPE, si_code %d\n", info->si_code);
    siglongjmp(back, 1);
}

double (*volatile call_sqrt)(double) = sqrt;
double (*volatile call_log)(double) = log;
long double (*volatile call_sqrtl)(long double) = sqrtl;
long double (*volatile call_logl)(long double) = logl;

static void attempt(const char *what, double (*f)(double), double arg)
{
    volatile double r = 0;
    printf("%s: ", what);
    feenableexcept(FE_DIVBYZERO | FE_INVALID);
    if (sigsetjmp(back, 1) == 0) {
        r = f(arg);
        printf("no trap, %g\n", r);
    }
    fedisableexcept(FE_ALL_EXCEPT);
    feclearexcept(FE_ALL_EXCEPT);
}

/* The same for long double functions (x87 code, and SSE code in glibc's
 * error handling). */
static void attempt_l(const char *what, long double (*f)(long double), long double arg)
{
    volatile long double r = 0;
    printf("%s: ", what);
    feenableexcept(FE_DIVBYZERO | FE_INVALID);
    if (sigsetjmp(back, 1) == 0) {
        r = f(arg);
        printf("no trap, %Lg\n", r);
    }
    fedisableexcept(FE_ALL_EXCEPT);
    feclearexcept(FE_ALL_EXCEPT);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    setvbuf(stdout, NULL, _IONBF, 0);
    struct sigaction sa = {0};
    sa.sa_sigaction = on_fpe;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGFPE, &sa, NULL);
    attempt("sqrt(-1)", call_sqrt, -1.0);
    attempt("log(0)", call_log, 0.0);
    attempt("sqrt(4)", call_sqrt, 4.0);
    attempt_l("sqrtl(-1)", call_sqrtl, -1.0L);
    attempt_l("logl(0)", call_logl, 0.0L);
    attempt_l("sqrtl(4)", call_sqrtl, 4.0L);
    double x = strtod(argv[1], NULL);
    DG_INPUTF(x);
    feenableexcept(FE_DIVBYZERO | FE_INVALID);
    double y = call_sqrt(x);
    fedisableexcept(FE_ALL_EXCEPT);
    DG_OUTPUTF(y);
    printf("%.17g\n", y);
    return 0;
}
