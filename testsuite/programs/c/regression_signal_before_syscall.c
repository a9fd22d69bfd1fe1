/* Regression (issue #2): a signal that arrives just before a system call must
 * be handled and the call then made -- natively the kernel runs the handler
 * first. The engine once answered such a call with EINTR without making it;
 * a skipped close() of a pipe's write end then left read() waiting for EOF
 * forever. Here a 50 us SIGALRM storm runs while the program creates pipes,
 * forks writers, closes its write ends and reads to EOF, many times. A lost
 * close() hangs the program (and the test's timeout fails it). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t ticks;

static void on_alarm(int sig)
{
    (void)sig;
    ticks++;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = { { 0, 50 }, { 0, 50 } };
    setitimer(ITIMER_REAL, &it, NULL);

    long total = 0;
    for (int round = 0; round < 300; round++) {
        int fds[2];
        if (pipe(fds) != 0) {
            perror("pipe");
            return 1;
        }
        pid_t child = fork();
        if (child == 0) {
            close(fds[0]);
            char msg[32];
            int n = snprintf(msg, sizeof msg, "round %d\n", round);
            if (write(fds[1], msg, (size_t)n) != n)
                _exit(2);
            _exit(0);
        }
        if (close(fds[1]) != 0) {
            printf("WRONG: close failed in round %d\n", round);
            return 1;
        }
        char buf[64];
        ssize_t n;
        long got = 0;
        while ((n = read(fds[0], buf, sizeof buf)) != 0) {
            if (n > 0)
                got += n;
        }
        close(fds[0]);
        int status;
        while (waitpid(child, &status, 0) < 0)
            ;
        total += got;
    }
    memset(&it, 0, sizeof it);
    setitimer(ITIMER_REAL, &it, NULL);
    printf("bytes read %ld\n", total);
    printf("END regression_signal_before_syscall\n");
    return 0;
}
