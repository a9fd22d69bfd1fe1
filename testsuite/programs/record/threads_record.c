/* Four threads each compute f(x_t) = x_t^3 + 2 x_t on their own input
 * concurrently (many iterations to interleave their recording); the main
 * thread adds the results. Gradient: 3 x_t^2 + 2. Usage: threads_record */
#include <pthread.h>
#include <stdio.h>
#include <valgrind/derivgrind.h>

#define THREADS 4
#define REPEAT 20000

static double inputs[THREADS], results[THREADS];

static void *work(void *arg)
{
    long t = (long)arg;
    double x = inputs[t], acc = 0;
    for (int r = 0; r < REPEAT; r++)
        acc = (x * x * x + 2.0 * x) + 0.0 * acc;
    results[t] = acc;
    return NULL;
}

int main(void)
{
    for (int t = 0; t < THREADS; t++) {
        inputs[t] = 0.5 + t;
        DG_INPUTF(inputs[t]);
    }
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, work, (void *)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    double sum = 0;
    for (int t = 0; t < THREADS; t++)
        sum += results[t];
    DG_OUTPUTF(sum);
    printf("%.17g\n", sum);
    return 0;
}
