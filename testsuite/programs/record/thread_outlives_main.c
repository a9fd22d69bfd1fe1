/* The main thread declares the input and leaves with the exit system call
 * while a second thread records a long recurrence (enough tape to start
 * dgad's writer thread), declares the output and leaves the same way; both
 * with status 3, which becomes the process's. Under dgad it must neither
 * hang nor lose the tape (nor fail to read code once the main thread, whose
 * id is the process id, is gone).
 * y_{k+1} = y_k * x + 0.5, y_0 = 1. Usage: thread_outlives_main X N */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <valgrind/derivgrind.h>

static double x;
static int n;

static void *work(void *arg)
{
    (void)arg;
    double y = 1.0;
    for (int i = 0; i < n; i++)
        y = y * x + 0.5;
    DG_OUTPUTF(y);
    printf("%.17g\n", y);
    fflush(stdout);
    syscall(SYS_exit, 3);
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
    syscall(SYS_exit, 3);
    return 0;
}
