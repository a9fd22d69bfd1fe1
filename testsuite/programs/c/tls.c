/* __thread variables: initialised and zero-initialised scalars, an array,
 * and a pointer into TLS, each thread working on its own copy while main's
 * copy stays untouched. Results are stored per thread and printed after the
 * joins, in thread order. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define THREADS 4

static __thread long counter = 100;
static __thread int zeroed;
static __thread unsigned char history[256];
static __thread long *self_pointer;

struct result {
    long counter;
    int zeroed;
    unsigned checksum;
    int pointer_ok;
};

static struct result results[THREADS];

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    self_pointer = &counter;
    for (int i = 0; i < 100000 * (id + 1); i++) {
        counter += id + 1;
        zeroed += i & 7;
        history[i & 255] += (unsigned char)(i * (id + 3));
    }
    unsigned checksum = 0;
    for (int i = 0; i < 256; i++)
        checksum = checksum * 31 + history[i];
    results[id] = (struct result){ counter, zeroed, checksum, self_pointer == &counter && *self_pointer == counter };
    return NULL;
}

int main(void)
{
    pthread_t threads[THREADS];
    counter = -1;
    self_pointer = &counter;
    for (intptr_t t = 0; t < THREADS; t++)
        pthread_create(&threads[t], NULL, worker, (void *)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    for (int t = 0; t < THREADS; t++)
        printf("thread %d: counter=%ld zeroed=%d history=%08x pointer=%s\n", t, results[t].counter,
               results[t].zeroed, results[t].checksum, results[t].pointer_ok ? "ok" : "WRONG");
    printf("main: counter=%ld zeroed=%d pointer=%s\n", counter, zeroed,
           self_pointer == &counter ? "ok" : "WRONG");
    printf("END tls\n");
    return 0;
}
