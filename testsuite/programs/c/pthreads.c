/* Eight threads update shared state three ways: under a mutex, with C11
 * atomics, and with a compare-and-swap loop. Every total is fixed by the
 * arithmetic, so the output does not depend on how the threads interleave. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 8
#define ITERATIONS 200000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t locked_sum;
static atomic_uint_fast64_t atomic_sum;
static atomic_uint_fast64_t cas_product_bits; /* xor-folded via CAS */
static atomic_int arrived;
static pthread_barrier_t barrier;
static uint64_t per_thread[THREADS];

static void *worker(void *arg)
{
    uint64_t id = (uint64_t)(uintptr_t)arg;
    uint64_t local = 0;

    atomic_fetch_add(&arrived, 1);
    /* Start together so the threads really contend for the lock. */
    pthread_barrier_wait(&barrier);
    for (uint64_t i = 0; i < ITERATIONS; i++) {
        uint64_t v = id * ITERATIONS + i;
        pthread_mutex_lock(&lock);
        locked_sum += v;
        pthread_mutex_unlock(&lock);
        atomic_fetch_add_explicit(&atomic_sum, v, memory_order_relaxed);
        uint_fast64_t old = atomic_load(&cas_product_bits);
        while (!atomic_compare_exchange_weak(&cas_product_bits, &old, old ^ (v * 0x9e3779b97f4a7c15ULL)))
            ;
        local += v & 0xff;
    }
    per_thread[id] = local;
    return NULL;
}

int main(void)
{
    pthread_t threads[THREADS];
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (uintptr_t t = 0; t < THREADS; t++)
        if (pthread_create(&threads[t], NULL, worker, (void *)t) != 0) {
            perror("pthread_create");
            return 1;
        }
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);

    uint64_t n = (uint64_t)THREADS * ITERATIONS;
    uint64_t expected = n * (n - 1) / 2;
    uint64_t expected_xor = 0;
    for (uint64_t v = 0; v < n; v++)
        expected_xor ^= v * 0x9e3779b97f4a7c15ULL;

    printf("threads arrived: %d\n", atomic_load(&arrived));
    printf("mutex sum:  %llu (%s)\n", (unsigned long long)locked_sum,
           locked_sum == expected ? "ok" : "WRONG");
    printf("atomic sum: %llu (%s)\n", (unsigned long long)atomic_load(&atomic_sum),
           atomic_load(&atomic_sum) == expected ? "ok" : "WRONG");
    printf("cas xor:    %016llx (%s)\n", (unsigned long long)atomic_load(&cas_product_bits),
           atomic_load(&cas_product_bits) == expected_xor ? "ok" : "WRONG");
    for (int t = 0; t < THREADS; t++)
        printf("thread %d low-byte sum: %llu\n", t, (unsigned long long)per_thread[t]);
    pthread_barrier_destroy(&barrier);
    printf("END pthreads\n");
    return 0;
}
