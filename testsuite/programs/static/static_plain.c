/* A statically linked program without client requests (issue 19,
 * decision 45), for null mode: its output must be the native one byte for
 * byte. It exercises what a static libc does on its own: its thread-local
 * storage and errno (on the main thread and on threads it creates with
 * CLONE_SETTLS), its heap (brk, then mmap) and its break directly, a
 * signal handler left with siglongjmp, timer signals, fork, and execve of
 * the program given as argv[1] (a dynamic one in the test). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static __thread long tls_value = 7;
static sigjmp_buf jump;
static volatile sig_atomic_t alarms;

static void on_segv(int sig) { (void)sig; siglongjmp(jump, 1); }
static void on_alarm(int sig) { (void)sig; alarms++; }

static void *worker(void *arg) {
    long k = (long)arg;
    tls_value += k;
    errno = 1000 + (int)k;
    double s = 0;
    for (int i = 1; i <= 1000; i++) s += sqrt((double)i * k) / i;
    if (errno != 1000 + k || tls_value != 7 + k) printf("thread %ld: TLS lost\n", k);
    return (void *)(long)(s * 1000);
}

int main(int argc, char **argv) {
    /* The heap: many small blocks (brk) and a large one (mmap). */
    size_t total = 0;
    char *blocks[1000];
    for (int i = 0; i < 1000; i++) {
        blocks[i] = malloc(100 + i);
        memset(blocks[i], i & 0xff, 100 + i);
        total += 100 + i;
    }
    char *big = malloc(64 << 20);
    big[(64 << 20) - 1] = 1;
    for (int i = 0; i < 1000; i++) free(blocks[i]);
    free(big);
    printf("heap %zu\n", total);
    /* The break itself: 100 MiB more (the kernel's break has that room after
     * the image; dgad's must too), touched, then half given back. */
    char *before = sbrk(0);
    char *grown = sbrk(100 << 20);
    if (grown != (void *)-1) {
        for (long i = 0; i < (100 << 20); i += 4096)
            grown[i] = 1;
        sbrk(-(50 << 20));
    }
    printf("break: grew %s, now %ld MiB above\n", grown == (void *)-1 ? "no" : "yes",
           (long)(((char *)sbrk(0) - before) >> 20));

    pthread_t t[4];
    for (long k = 0; k < 4; k++) pthread_create(&t[k], 0, worker, (void *)(k + 1));
    for (int k = 0; k < 4; k++) {
        void *r;
        pthread_join(t[k], &r);
        printf("thread %d: %ld\n", k + 1, (long)r);
    }
    printf("main tls %ld\n", tls_value);

    signal(SIGSEGV, on_segv);
    if (!sigsetjmp(jump, 1)) {
        *(volatile int *)16 = 1;
        puts("no fault");
    } else {
        puts("fault caught");
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, 0);
    ualarm(2000, 2000);
    volatile double s = 0;
    for (long i = 0; alarms < 3; i++) s += sin(i * 1e-3);
    ualarm(0, 0);
    printf("alarms %d\n", (int)alarms);

    errno = 0;
    double l = log(-1.0);
    printf("log(-1) %g errno %d\n", l, errno);
    fflush(stdout);

    pid_t pid = fork();
    if (pid == 0) {
        printf("child %d\n", (int)(getpid() > 0));
        fflush(stdout);
        _exit(5);
    }
    int status;
    waitpid(pid, &status, 0);
    printf("child status %d\n", WEXITSTATUS(status));
    fflush(stdout);
    if (argc > 1) {
        execv(argv[1], argv + 1);
        perror("execv");
        return 1;
    }
    return 0;
}
