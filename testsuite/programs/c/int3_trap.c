/* Executes int3 three times under a SIGTRAP handler, which counts the traps
 * and checks that the reported pc is the instruction after int3 (as the
 * kernel reports it natively). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

static volatile int traps, at_label;
extern char after_int3[];

static void handler(int sig, siginfo_t *info, void *ucv)
{
    (void)sig;
    (void)info;
    traps++;
    at_label += ((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP] == (long)after_int3;
}

__attribute__((noinline)) static void trap_once(void)
{
    __asm__ volatile("int3\n\t.globl after_int3\nafter_int3:\n\tnop" ::: "memory");
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGTRAP, &sa, NULL);
    for (int i = 0; i < 3; i++)
        trap_once();
    printf("traps %d, reported after int3: %d\n", traps, at_label);
    printf("END int3_trap\n");
    return 0;
}
