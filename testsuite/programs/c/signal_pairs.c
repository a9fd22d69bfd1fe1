/* Two different signals close together, thousands of times: a SIGUSR1
 * sent to itself and a SIGALRM from a 1–11 µs timer, which lands in the
 * middle of the first one's handling. Each must reach its handler exactly
 * once. An older dgad lost about one SIGALRM in 500 and delivered the
 * SIGUSR1 a second time in its place: the runtime took an entry off its
 * queue of pending signals with a length read before a new one arrived
 * (CPython's test_signal.test_stress_delivery_simultaneous). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t usr, alrm;

static void handler(int sig)
{
    if (sig == SIGUSR1)
        usr++;
    else if (sig == SIGALRM)
        alrm++;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void)
{
    const int n = 5000;
    int wrong = 0;
    struct sigaction sa = {0};
    sa.sa_handler = handler;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);
    srand(1);
    for (int i = 0; i < n; i++) {
        int u = usr, a = alrm;
        struct itimerval it = {{0, 0}, {0, 1 + rand() % 11}};
        setitimer(ITIMER_REAL, &it, NULL);
        kill(getpid(), SIGUSR1);
        double end = now() + 1.0;
        while ((usr < u + 1 || alrm < a + 1) && now() < end)
            usleep(10);
        if (usr != u + 1 || alrm != a + 1) {
            if (wrong < 5)
                printf("pair %d: SIGUSR1 x%d, SIGALRM x%d\n", i, usr - u, alrm - a);
            wrong++;
        }
    }
    printf("%d pairs, %d delivered wrong; SIGUSR1 %d, SIGALRM %d\n", n, wrong, usr, alrm);
    printf("END signal_pairs\n");
    return 0;
}
