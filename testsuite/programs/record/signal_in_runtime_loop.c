/* Loops whose only exits from cache code are record mode's calls into the
 * runtime, their back edges linked: the SIGALRMs that arrive while the
 * runtime applies an instruction's semantics must still reach the handler,
 * or the loops never end. Phase 1 runs before any input is declared (the
 * thread has no tape chunk, so even passive arithmetic goes through the
 * runtime); phase 2 records y_{k+1} = y_k / x + 0.5 (an active division
 * each step) until TICKS more alarms came, and prints the number of steps
 * so the test can check dy/dx. Usage: signal_in_runtime_loop X */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <valgrind/derivgrind.h>

#define TICKS 20

static volatile sig_atomic_t ticks;

static void on_alarm(int sig)
{
    (void)sig;
    if (ticks < TICKS)
        ticks++;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    double x = atof(argv[1]), y = 1.0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every = {{0, 1000}, {0, 1000}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &every, NULL);
    volatile double sink;
    double w = 1.0;
    while (ticks < TICKS) {
        for (int i = 0; i < 1000; i++)
            w = w * 1.0000001 + 1e-9;
        sink = w;
    }
    (void)sink;
    ticks = 0;
    DG_INPUTF(x);
    long steps = 0;
    while (ticks < TICKS) {
        y = y / x + 0.5;
        steps++;
    }
    setitimer(ITIMER_REAL, &off, NULL);
    DG_OUTPUTF(y);
    printf("ticks: %d\nsteps: %ld\n", (int)ticks, steps);
    return 0;
}
