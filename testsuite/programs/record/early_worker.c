/* A library whose constructor runs before dgad's (the program links it,
 * libdgad.so is preloaded and so initialised after it): it starts a worker
 * thread that waits for jobs from main, and installs a SIGUSR1 handler.
 * Both later compute on data main marked as inputs: under dgad they must
 * run from the code cache, or the derivatives they compute are lost.
 * EARLY_WORKER_BLOCK=1 makes the worker block every signal first (then it
 * cannot be taken over, and dgad must say so). */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static const double *job_in;
static double *job_out;
static int job_n;
static int job_pending;
static int job_done;

/* Inputs and result of the SIGUSR1 handler. */
volatile double early_handler_in;
volatile double early_handler_out;

static int worker_ready;

static void *worker(void *arg)
{
    (void)arg;
    if (getenv("EARLY_WORKER_BLOCK")) {
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, NULL);
    }
    pthread_mutex_lock(&lock);
    worker_ready = 1;
    pthread_cond_broadcast(&cond);
    for (;;) {
        while (!job_pending)
            pthread_cond_wait(&cond, &lock);
        job_pending = 0;
        for (int i = 0; i < job_n; i++) {
            double x = job_in[i];
            job_out[i] = x * x * sin(x) + 2.0 * x;
        }
        job_done = 1;
        pthread_cond_broadcast(&cond);
    }
    return NULL;
}

static void on_usr1(int sig)
{
    (void)sig;
    double x = early_handler_in;
    early_handler_out = 3.0 * x * x + exp(x);
}

__attribute__((constructor)) static void start_early_worker(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_setname_np(t, "early-worker");
    pthread_detach(t);
    /* Return only once the worker runs (and blocks signals if asked). */
    pthread_mutex_lock(&lock);
    while (!worker_ready)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
}

/* Runs the worker on in[0..n), waits for out. */
void early_worker_run(const double *in, double *out, int n)
{
    pthread_mutex_lock(&lock);
    job_in = in;
    job_out = out;
    job_n = n;
    job_done = 0;
    job_pending = 1;
    pthread_cond_broadcast(&cond);
    while (!job_done)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
}
