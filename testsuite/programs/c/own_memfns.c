/* A program that defines the C library's memory and string functions
 * itself and exports them (linked with -rdynamic), as sanitizer runtimes
 * (libtsan, libasan) and allocator libraries do: the dynamic loader binds
 * every other object's references to these names to its definitions.
 * dgad's runtime must not run them: they are guest code, and run natively
 * from the runtime they saw its memory and stack (ThreadSanitizer reported
 * races in the runtime's memset and the program hung). An older dgad
 * called them whenever it made a thread's context, among others.
 * Prints how often each was called while the program made threads,
 * forked and printed, which native and dgad runs must agree on. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long calls[6];

/* Volatile accesses keep the compilers from turning these loops into
 * calls of the functions themselves. */
#define NO_BUILTIN __attribute__((noinline))

NO_BUILTIN void *memset(void *d, int c, size_t n)
{
    calls[0]++;
    volatile unsigned char *p = d;
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)c;
    return d;
}

NO_BUILTIN void *memcpy(void *d, const void *s, size_t n)
{
    calls[1]++;
    volatile unsigned char *p = d;
    const unsigned char *q = s;
    for (size_t i = 0; i < n; i++)
        p[i] = q[i];
    return d;
}

NO_BUILTIN void *memmove(void *d, const void *s, size_t n)
{
    calls[2]++;
    volatile unsigned char *p = d;
    const unsigned char *q = s;
    if (p < q)
        for (size_t i = 0; i < n; i++)
            p[i] = q[i];
    else
        for (size_t i = n; i-- > 0;)
            p[i] = q[i];
    return d;
}

NO_BUILTIN int memcmp(const void *a, const void *b, size_t n)
{
    calls[3]++;
    const volatile unsigned char *p = a, *q = b;
    for (size_t i = 0; i < n; i++)
        if (p[i] != q[i])
            return p[i] < q[i] ? -1 : 1;
    return 0;
}

NO_BUILTIN int bcmp(const void *a, const void *b, size_t n)
{
    calls[4]++;
    const volatile unsigned char *p = a, *q = b;
    for (size_t i = 0; i < n; i++)
        if (p[i] != q[i])
            return 1;
    return 0;
}

NO_BUILTIN size_t strlen(const char *s)
{
    calls[5]++;
    const volatile char *p = s;
    size_t n = 0;
    while (p[n])
        n++;
    return n;
}

static void *thread(void *arg)
{
    return arg;
}

int main(void)
{
    long before[6];
    for (int k = 0; k < 6; k++)
        before[k] = calls[k];
    for (int i = 0; i < 8; i++) {
        pthread_t t;
        pthread_create(&t, NULL, thread, NULL);
        pthread_join(t, NULL);
    }
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    long seen[6];
    for (int k = 0; k < 6; k++)
        seen[k] = calls[k] - before[k];
    static const char *names[] = {"memset", "memcpy", "memmove", "memcmp", "bcmp", "strlen"};
    for (int k = 0; k < 6; k++)
        printf("%s: %ld calls\n", names[k], seen[k]);
    printf("END own_memfns\n");
    return 0;
}
