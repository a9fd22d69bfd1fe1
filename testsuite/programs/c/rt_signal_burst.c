/* Queues 30 real-time signals with values while they are blocked, then
 * unblocks them: the kernel delivers all 30 at once, and the handler must
 * see every one (count and sum of the values). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile int count, sum;

static void handler(int sig, siginfo_t *info, void *uc)
{
    (void)sig;
    (void)uc;
    count++;
    sum += info->si_value.sival_int;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGRTMIN, &sa, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGRTMIN);
    sigprocmask(SIG_BLOCK, &set, NULL);
    for (int i = 1; i <= 30; i++) {
        union sigval v;
        v.sival_int = i;
        if (sigqueue(getpid(), SIGRTMIN, v) != 0)
            return 1;
    }
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    printf("signals %d, sum of values %d\n", count, sum);
    printf("END rt_signal_burst\n");
    return 0;
}
