/* Creates 17,000 short-lived threads one after another (more than dgad's
 * registry of 16,384 thread contexts holds), then 8 at a time for 100
 * rounds, each returning a value the main thread sums. Under dgad the
 * contexts of finished threads are taken over by new ones. */
#include <pthread.h>
#include <stdio.h>

static void *work(void *arg)
{
    return (void *)((long)arg * 2 + 1);
}

int main(void)
{
    long sum = 0;
    for (long i = 0; i < 17000; i++) {
        pthread_t t;
        void *r;
        if (pthread_create(&t, NULL, work, (void *)i) || pthread_join(t, &r))
            return 1;
        sum += (long)r;
    }
    printf("sequential: %ld\n", sum);
    sum = 0;
    for (long round = 0; round < 100; round++) {
        pthread_t t[8];
        for (long k = 0; k < 8; k++)
            if (pthread_create(&t[k], NULL, work, (void *)(round * 8 + k)))
                return 1;
        for (int k = 0; k < 8; k++) {
            void *r;
            pthread_join(t[k], &r);
            sum += (long)r;
        }
    }
    printf("8 at a time: %ld\n", sum);
    printf("END many_threads\n");
    return 0;
}
