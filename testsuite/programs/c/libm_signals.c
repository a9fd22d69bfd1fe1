/* libm under record mode with signals: the math wrappers run natively on
 * the guest stack, and a SIGALRM that arrives meanwhile must be delivered
 * when the call returns (the handler calls libm too). Active inputs are
 * declared, so the wrappers record. The printed results do not depend on
 * how many ticks arrive: the printed sums come from a fixed number of
 * iterations. */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
/* Not on the suite's include path: found relative to this file. */
#include "../../../include/valgrind/derivgrind.h"

static volatile sig_atomic_t ticks;
static volatile double in_handler = 0.5;

static void on_alarm(int sig)
{
    (void)sig;
    in_handler = sin(in_handler) + 0.5;
    ticks++;
}

int main(void)
{
    struct itimerval it = { { 0, 200 }, { 0, 200 } };
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);

    double x = 0.75;
    float xf = 0.75f;
    long double xl = 0.75L;
    DG_INPUTF(x);
    DG_INPUTF(xf);
    DG_INPUTF(xl);
    setitimer(ITIMER_REAL, &it, NULL);
    double s = 0.0, sn, cs, ip;
    float sf = 0.0f;
    long double sl = 0.0L;
    int e;
    for (int i = 0; i < 50000; i++) {
        double t = x + 1e-6 * (i % 1000);
        sincos(t, &sn, &cs);
        s += sin(t) * exp(-t) + pow(t, 1.5) + sn * cs + frexp(t, &e) + modf(t * 3.0, &ip);
        sf += sinf(xf) * logf(xf + 1.0f);
        if (i % 16 == 0)
            sl += sinl(xl) * expl(-xl) + atan2l(xl, 2.0L);
    }
    /* Make sure ticks did arrive (natively the loop above is short). */
    volatile double junk = 0.25;
    for (long i = 0; ticks < 20 && i < 400000000; i++)
        junk = sin(junk) + 0.25;
    struct itimerval off;
    memset(&off, 0, sizeof off);
    setitimer(ITIMER_REAL, &off, NULL);
    DG_OUTPUTF(s);
    DG_OUTPUTF(sf);
    DG_OUTPUTF(sl);
    printf("ticks arrived: %s\n", ticks >= 20 ? "yes" : "no");
    printf("%.6g %.4g %.6Lg\n", s / 50000.0, sf / 50000.0f, sl / 3125.0L);
    puts("END libm_signals");
    return 0;
}
