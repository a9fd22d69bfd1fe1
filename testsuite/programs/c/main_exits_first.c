/* The main thread leaves with pthread_exit while a worker thread goes on:
 * the worker then runs code nobody has run before (qsort with a callback,
 * printf of doubles, strtod), which under dgad must still be read and
 * translated once the process id — the main thread's — has no address
 * space. glibc ends the process with status 0 when the worker returns. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void *worker(void *arg)
{
    (void)arg;
    usleep(20 * 1000); /* let the main thread be gone */
    double values[64];
    for (int i = 0; i < 64; i++)
        values[i] = strtod("2.5", NULL) * ((i * 37) % 64);
    qsort(values, 64, sizeof values[0], compare);
    printf("worker: min %.3f median %.3f max %.3f\n", values[0], values[32], values[63]);
    printf("END main_exits_first\n");
    return NULL;
}

int main(void)
{
    pthread_t t;
    printf("main: leaving first\n");
    fflush(stdout);
    if (pthread_create(&t, NULL, worker, NULL))
        return 1;
    pthread_exit(NULL);
}
