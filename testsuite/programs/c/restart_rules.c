/* Which system calls come back with EINTR after an SA_RESTART handler:
 * the kernel restarts a plain pipe read, but a futex wait with a timeout
 * (sem_timedwait) and a receive on a socket with SO_RCVTIMEO fail with
 * EINTR whatever the handler's flags (signal(7)). An older dgad restarted
 * the latter by system-call number, so they ran into their timeout. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t handled;
static int pipe_fds[2];

static void handler(int sig)
{
    (void)sig;
    handled++;
}

static void alarm_in_150ms(void)
{
    struct itimerval it = {{0, 0}, {0, 150000}};
    setitimer(ITIMER_REAL, &it, NULL);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void report(const char *what, long r, int err, double t0)
{
    printf("%s: result %ld, %s, %s\n", what, r, r < 0 ? strerror(err) : "no error",
           now() - t0 < 0.5 ? "early" : "at its timeout or later");
}

static void *late_writer(void *arg)
{
    (void)arg;
    usleep(400000);
    if (write(pipe_fds[1], "x", 1) != 1)
        return NULL;
    return NULL;
}

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);

    sem_t sem;
    sem_init(&sem, 0, 0);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 1;
    alarm_in_150ms();
    double t0 = now();
    long r = sem_timedwait(&sem, &deadline);
    report("sem_timedwait, 1 s timeout", r, errno, t0);

    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    struct timeval tv = {1, 0};
    setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char c;
    alarm_in_150ms();
    t0 = now();
    r = recv(sv[0], &c, 1, 0);
    report("recv, SO_RCVTIMEO 1 s", r, errno, t0);

    /* Restarted: the read returns the byte written after the signal. */
    if (pipe(pipe_fds) != 0)
        return 1;
    pthread_t t;
    pthread_create(&t, NULL, late_writer, NULL);
    alarm_in_150ms();
    r = read(pipe_fds[0], &c, 1);
    printf("pipe read: result %ld (restarted after the handler: %d)\n", r, r == 1 && c == 'x');
    pthread_join(t, NULL);
    printf("handler ran %d times\n", handled);
    printf("END restart_rules\n");
    return 0;
}
