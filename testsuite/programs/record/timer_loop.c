/* y_{k+1} = (y_k·x + 0.5) / (1 + 10^-6·y_k), y_0 = 1, for N steps, while a
 * 50 µs timer interrupts it with a handler that computes on its own. A
 * signal must reach the handler between two instructions, never between
 * an instruction's AD code and the instruction itself: delivered there,
 * the instruction ran again from its start after the handler, its AD code
 * included (a tangent added twice, a block recorded over the result's own
 * index). x is the AD input (marked, and seeded with dot 1), y the output;
 * prints y, whether the handler ran, and y's tangent on stderr.
 * Usage: timer_loop X N */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <valgrind/derivgrind.h>

static volatile double handler_acc;
static volatile double handler_in = 0.5;
static volatile int ticks;

static void on_alarm(int sig)
{
    (void)sig;
    ticks++;
    double t = handler_in;
    for (int i = 0; i < 20; i++)
        t = t * 1.0001 + handler_in / (t + 1.0);
    handler_acc += t;
}

static __attribute__((noinline)) double steps(double x, int n)
{
    double y = 1.0;
    for (int i = 0; i < n; i++)
        y = (y * x + 0.5) / (1.0 + y * 1e-6);
    return y;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    double x = atof(argv[1]);
    int n = atoi(argv[2]);
    double one = 1.0;
    DG_INPUTF(x);
    DG_SET_DOTVALUE(&x, &one, sizeof x);
    signal(SIGALRM, on_alarm);
    struct itimerval it = {{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &it, NULL);
    double y = steps(x, n);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    DG_OUTPUTF(y);
    double d = 0.0;
    DG_GET_DOTVALUE(&y, &d, sizeof d);
    printf("%.17g %s\n", y, ticks > 0 ? "interrupted" : "not interrupted");
    fprintf(stderr, "dot %a\n", d);
    return 0;
}
