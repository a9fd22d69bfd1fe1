/* A handler running on the alternate signal stack asks for it: natively
 * the answer says SS_ONSTACK, and replacing the stack from there fails
 * (EPERM). Under dgad the kernel sees the runtime's stack pointer, so the
 * runtime must answer for the guest's. */
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
    printf("END altstack_query\n");
    return 0;
}
