/* A worker thread records without end (a recurrence on the active input
 * x, enough to keep dgad's writer thread busy) while the main thread
 * computes y = x^3, declares it and calls exit after 50 ms. The process
 * must end at once, as natively, with the main thread's gradient 3x^2 on
 * the tape. Usage: exit_while_thread_records X */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <valgrind/derivgrind.h>

static double x;
static volatile double sink;

static void *work(void *arg)
{
    (void)arg;
    double acc = 1.0;
    for (;;) {
        for (int i = 0; i < 1000; i++)
            acc = acc * x + 0.5;
        sink = acc;
        acc = 1.0;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    x = atof(argv[1]);
    DG_INPUTF(x);
    pthread_t t;
    if (pthread_create(&t, NULL, work, NULL))
        return 1;
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    double y = x * x * x;
    DG_OUTPUTF(y);
    printf("%.17g\n", y);
    exit(0);
}
