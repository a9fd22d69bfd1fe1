/* A secondary thread calls _exit(3) while main is blocked in pthread_join
 * and a third thread is blocked in sleep. The whole process must exit with
 * status 3 at once. _exit skips stdio flushing, so the thread flushes first. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *sleeper(void *arg)
{
    (void)arg;
    sleep(60);
    printf("sleeper woke up (WRONG)\n");
    return NULL;
}

static void *exiter(void *arg)
{
    (void)arg;
    usleep(50 * 1000);
    printf("exiting from a secondary thread with status 3\n");
    printf("END exit_from_thread\n");
    fflush(stdout);
    _exit(3);
}

int main(void)
{
    pthread_t s, e;
    printf("main: starting threads\n");
    fflush(stdout);
    pthread_create(&s, NULL, sleeper, NULL);
    pthread_create(&e, NULL, exiter, NULL);
    pthread_join(s, NULL);
    printf("main: join returned (WRONG)\n");
    return 0;
}
