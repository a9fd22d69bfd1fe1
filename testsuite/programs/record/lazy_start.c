/* Instrumentation that begins at the first request that may make data
 * active (decision 53): a program that computes long before it marks
 * anything, then marks x and computes with it in the same basic block.
 *
 *   lazy_start [plain|mode|thread]
 *
 * Before any mark, c = Σ_{k<64} sin(k/64)/64 (passive) is computed and a
 * table is copied around (start-up work, run from plain translations).
 * `mode` asks DG_GET_MODE first (it must not begin the instrumentation);
 * `thread` starts a worker before the mark, which waits until x is marked
 * and then computes w = x³ (the instrumentation must begin before the
 * second thread exists). Then x = 1.25 is marked (DG_INPUTF; in dot mode
 * its dot value set to 1) and, in the same block, y = c x² + x / (1 + c)
 * is computed from it (in dot mode x takes its seed from dg-input-dots
 * of the record directory).
 *
 * Outputs y and w (w = 0 without the worker): dy/dx = 2 c x + 1/(1 + c),
 * dw/dx = 3 x² with the worker. Prints y, w and c. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <valgrind/derivgrind.h>

static double table[256], copy[256];
static volatile double x_shared, w_result;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t marked = PTHREAD_COND_INITIALIZER;
static int ready;

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    while (!ready)
        pthread_cond_wait(&marked, &lock);
    pthread_mutex_unlock(&lock);
    double x = x_shared;
    w_result = x * x * x;
    return NULL;
}

__attribute__((noinline)) static double compute(double *px, double c)
{
    double x = *px;
    DG_INPUTF(x);
    /* Same block as the mark: must run instrumented. */
    double y = c * x * x + x / (1.0 + c);
    *px = x;
    return y;
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "plain";
    for (int k = 0; k < 256; k++)
        table[k] = sin(k / 64.0) / 64.0;
    memcpy(copy, table, sizeof table);
    double c = 0;
    for (int k = 0; k < 64; k++)
        c += copy[k];
    if (strcmp(how, "mode") == 0 && DG_GET_MODE == 0x100)
        return 3; /* never: asked only so that the request is made */
    pthread_t t;
    int threaded = strcmp(how, "thread") == 0;
    if (threaded && pthread_create(&t, NULL, worker, NULL) != 0)
        return 2;
    double x = 1.25;
    double y = compute(&x, c);
    double w = 0;
    if (threaded) {
        x_shared = x;
        pthread_mutex_lock(&lock);
        ready = 1;
        pthread_cond_signal(&marked);
        pthread_mutex_unlock(&lock);
        pthread_join(t, NULL);
        w = w_result;
    }
    DG_OUTPUTF(y);
    DG_OUTPUTF(w);
    printf("y %.17g\nw %.17g\nc %.17g\n", y, w, c);
    return 0;
}
