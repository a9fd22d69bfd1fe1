/* SIGALRM from setitimer must interrupt both a busy loop (code that never
 * enters the kernel) and a sigsuspend wait. The handler stops counting at the
 * target, so the printed counts are exact even if an extra tick arrives. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#define TICKS 25

static volatile sig_atomic_t ticks;

static void on_alarm(int sig)
{
    (void)sig;
    if (ticks < TICKS)
        ticks++;
}

static void start_timer(long usec)
{
    struct itimerval it = { { 0, usec }, { 0, usec } };
    setitimer(ITIMER_REAL, &it, NULL);
}

static void stop_timer(void)
{
    struct itimerval it;
    memset(&it, 0, sizeof it);
    setitimer(ITIMER_REAL, &it, NULL);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);

    /* Phase 1: busy loop doing arithmetic whose result is not printed (its
     * iteration count depends on timing). */
    volatile double sink = 0;
    double x = 1.0;
    start_timer(2000);
    while (ticks < TICKS) {
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
        sink = x;
    }
    stop_timer();
    (void)sink;
    printf("busy phase ticks: %d\n", (int)ticks);

    /* Phase 2: sleep in sigsuspend with SIGALRM blocked between checks. */
    ticks = 0;
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    sigprocmask(SIG_BLOCK, &block, &old);
    start_timer(1000);
    int wakeups = 0;
    while (ticks < TICKS) {
        sigsuspend(&old);
        wakeups++;
    }
    stop_timer();
    sigprocmask(SIG_SETMASK, &old, NULL);
    printf("sigsuspend phase ticks: %d, woke at least once per tick: %s\n",
           (int)ticks, wakeups >= TICKS ? "yes" : "no");

    struct itimerval now;
    getitimer(ITIMER_REAL, &now);
    printf("timer disarmed: %s\n", now.it_value.tv_sec == 0 && now.it_value.tv_usec == 0 ? "yes" : "no");
    printf("END sigalrm\n");
    return 0;
}
