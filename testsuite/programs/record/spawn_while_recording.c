/* A worker thread records y_{k+1} = y_k * x + 0.5 (y_0 = 1) for N steps
 * while the main thread runs /bin/true twenty times with posix_spawn (a
 * vfork-style child sharing the recording process's memory until it
 * execs). The child must not write the worker's half-filled buffers: the
 * gradient of y_N is the recurrence's. Usage: spawn_while_recording X N */
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <valgrind/derivgrind.h>

extern char **environ;
static double x, y;
static int n;

static void *work(void *arg)
{
    (void)arg;
    double v = 1.0;
    for (int i = 0; i < n; i++)
        v = v * x + 0.5;
    y = v;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    x = atof(argv[1]);
    n = atoi(argv[2]);
    DG_INPUTF(x);
    pthread_t t;
    if (pthread_create(&t, NULL, work, NULL))
        return 1;
    for (int i = 0; i < 20; i++) {
        pid_t child;
        char *args[] = {"/bin/true", NULL};
        if (posix_spawn(&child, "/bin/true", NULL, NULL, args, environ) != 0)
            return 1;
        int status;
        waitpid(child, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return 1;
    }
    pthread_join(t, NULL);
    DG_OUTPUTF(y);
    printf("%.17g\n", y);
    return 0;
}
