/* A handler running on the alternate signal stack asks for it: natively
 * the answer says SS_ONSTACK, and replacing the stack from there fails
 * (EPERM). Under dgad the kernel holds the runtime's own alternate stack
 * and the runtime keeps the guest's, so it must answer for it with the
 * kernel's rules: the errors for bad flags, small sizes and bad pointers,
 * a new thread without one, a forked child with its parent's. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int flags_in_handler, replace_result;

static void handler(int sig)
{
    (void)sig;
    stack_t current, replacement;
    sigaltstack(NULL, &current);
    flags_in_handler = current.ss_flags;
    replacement.ss_sp = malloc(65536);
    replacement.ss_size = 65536;
    replacement.ss_flags = 0;
    replace_result = sigaltstack(&replacement, NULL);
}

static void *thread_query(void *arg)
{
    stack_t t;
    sigaltstack(NULL, &t);
    *(int *)arg = (t.ss_flags & SS_DISABLE) != 0;
    return NULL;
}

static int result(int r)
{
    return r == 0 ? 0 : errno;
}

int main(void)
{
    stack_t ss;
    ss.ss_sp = malloc(65536);
    ss.ss_size = 65536;
    ss.ss_flags = 0;
    if (sigaltstack(&ss, NULL) != 0)
        return 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
    stack_t after;
    sigaltstack(NULL, &after);
    printf("in the handler: on the alternate stack %d, replacing it fails %d; after it: on it %d\n",
           (flags_in_handler & SS_ONSTACK) != 0, replace_result != 0, (after.ss_flags & SS_ONSTACK) != 0);

    stack_t bad = {.ss_sp = malloc(65536), .ss_size = 65536, .ss_flags = 0x1234};
    printf("bad flags: %s\n", strerror(result(sigaltstack(&bad, NULL))));
    stack_t small = {.ss_sp = bad.ss_sp, .ss_size = 1024, .ss_flags = 0};
    printf("too small: %s\n", strerror(result(sigaltstack(&small, NULL))));
    printf("unreadable: %s\n", strerror(result(sigaltstack((stack_t *)8, NULL))));
    printf("unwritable old: %s\n",
           strerror(result(sigaltstack(NULL, (stack_t *)(void *)main))));
    int thread_disabled = -1;
    pthread_t th;
    pthread_create(&th, NULL, thread_query, &thread_disabled);
    pthread_join(th, NULL);
    printf("a new thread has none: %d\n", thread_disabled);
    stack_t now;
    sigaltstack(NULL, &now);
    printf("still the first: %d, size %zu\n", now.ss_sp == ss.ss_sp, now.ss_size);
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
    sigaltstack(NULL, &now);
    printf("disabled: %d\n", (now.ss_flags & SS_DISABLE) != 0);
    printf("END altstack_query\n");
    return 0;
}
