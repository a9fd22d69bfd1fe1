/* Loads from addresses nothing is mapped at (the null page, and three far
 * from where Linux places mappings); a SIGSEGV handler checks that the
 * fault address it is told is the one loaded from. Under dgad's record
 * mode those addresses' shadows lie in reserved gaps, and the shadow access
 * faults first: the program must still see its own address. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static sigjmp_buf env;
static void *fault_address;

static void handler(int sig, siginfo_t *info, void *uc)
{
    (void)sig;
    (void)uc;
    fault_address = info->si_addr;
    siglongjmp(env, 1);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    const unsigned long addresses[] = {0x10UL, 0x123400000000UL, 0x400000000000UL, 0x600000000000UL};
    for (int i = 0; i < 4; i++) {
        volatile double *p = (volatile double *)addresses[i];
        if (sigsetjmp(env, 1) == 0)
            printf("load %d read %g (WRONG)\n", i, *p);
        else
            printf("load %d faulted at %s\n", i, fault_address == (void *)p ? "its address" : "another address (WRONG)");
    }
    printf("END wild_addresses\n");
    return 0;
}
