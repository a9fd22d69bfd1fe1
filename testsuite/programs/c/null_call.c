/* Calls through a null function pointer three times; a SIGSEGV handler
 * checks the fault address and siglongjmps back each time. Under dgad the
 * call goes through the indirect-branch lookup, whose empty entries once
 * carried the key of address 0: the guest must get the SIGSEGV it gets
 * natively. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static sigjmp_buf env;

static void handler(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    printf("caught signal %d, fault address %s\n", sig, info->si_addr == NULL ? "null" : "not null");
    siglongjmp(env, 1);
}

typedef int (*function)(int);
static volatile function target = NULL;

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    for (int i = 0; i < 3; i++) {
        if (sigsetjmp(env, 1) == 0) {
            printf("call %d through a null pointer\n", i);
            fflush(stdout);
            printf("returned %d (WRONG)\n", target(i));
        } else {
            printf("recovered from call %d\n", i);
        }
    }
    printf("END null_call\n");
    return 0;
}
