/* While the main code records y_{k+1} = y_k * x + 0.5 (y_0 = 1) for N
 * steps, a SIGALRM handler firing every 200 us computes with another AD
 * input z (a loop in registers). The handler's arithmetic must not leak
 * into the registers of the code it interrupted: dy/dx is the recurrence's
 * and dy/dz is 0. Usage: signal_arithmetic X N */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <valgrind/derivgrind.h>

static volatile double z, acc;
static volatile int ticks;

static void on_alarm(int sig)
{
    (void)sig;
    ticks++;
    double t = z;
    for (int i = 0; i < 50; i++)
        t = t * 1.0001 + z;
    acc += t;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    double zz = 3.0, x = atof(argv[1]), y = 1.0;
    int n = atoi(argv[2]);
    DG_INPUTF(zz);
    z = zz;
    DG_INPUTF(x);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every = {{0, 200}, {0, 200}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &every, NULL);
    for (int i = 0; i < n; i++)
        y = y * x + 0.5;
    setitimer(ITIMER_REAL, &off, NULL);
    DG_OUTPUTF(y);
    printf("%.17g handler ran: %d\n", y, ticks > 0);
    return 0;
}
