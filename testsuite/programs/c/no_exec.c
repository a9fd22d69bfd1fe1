/* Jumps into a page mapped readable and writable but not executable
 * (holding `mov eax, 42; ret`): natively a SIGSEGV, which a handler turns
 * into a siglongjmp. After mprotect adds PROT_EXEC the same code runs and
 * returns 42. Under dgad the page must not be executed before that. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static sigjmp_buf env;

static void handler(int sig, siginfo_t *info, void *uc)
{
    (void)info;
    (void)uc;
    printf("caught signal %d\n", sig);
    siglongjmp(env, 1);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return 1;
    const unsigned char code[] = {0xb8, 42, 0, 0, 0, 0xc3}; /* mov eax, 42; ret */
    memcpy(page, code, sizeof code);
    int (*function)(void) = (int (*)(void))page;
    if (sigsetjmp(env, 1) == 0)
        printf("executed memory without PROT_EXEC: %d (WRONG)\n", function());
    else
        printf("no execution without PROT_EXEC\n");
    if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0)
        return 1;
    printf("after mprotect: %d\n", function());
    if (mprotect(page, 4096, PROT_READ) != 0)
        return 1;
    if (sigsetjmp(env, 1) == 0)
        printf("executed memory after PROT_EXEC was taken away: %d (WRONG)\n", function());
    else
        printf("no execution after PROT_EXEC was taken away\n");
    printf("END no_exec\n");
    return 0;
}
