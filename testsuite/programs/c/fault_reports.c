/* What the kernel tells a fault handler, as a program sees it natively:
 * - SIGILL (ud2) and SIGFPE (integer division by zero): si_addr is the
 *   faulting instruction (an older dgad put a code-cache address there);
 * - a jump into a mapped page without execute permission: SEGV_ACCERR,
 *   and into an unmapped one SEGV_MAPERR, both with the page-fault error
 *   code of a user instruction fetch (0x15 present, 0x14 not) and trap 14
 *   in the frame (an older dgad gave SEGV_MAPERR and zeros);
 * - the %gs base the program reads (rdgsbase where the kernel enables it,
 *   arch_prctl(ARCH_GET_GS)) is 0, as the kernel starts a process (an older
 *   dgad let rdgsbase read its own thread context's address). */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static sigjmp_buf back;
static volatile uintptr_t expected_addr;

static void report(int sig, siginfo_t *info, void *ucv)
{
    greg_t *g = ((ucontext_t *)ucv)->uc_mcontext.gregs;
    printf("%s: si_code %d, si_addr is the %s %d, pc there %d", strsignal(sig), info->si_code,
           sig == SIGSEGV ? "target" : "instruction", (uintptr_t)info->si_addr == expected_addr,
           (uintptr_t)g[REG_RIP] == expected_addr);
    if (sig == SIGSEGV)
        printf(", error code %#llx, trap %lld", (long long)g[REG_ERR], (long long)g[REG_TRAPNO]);
    printf("\n");
    siglongjmp(back, 1);
}

extern char ud2_at[], div_at[];
__attribute__((noinline)) static void raise_ill(void)
{
    __asm__ volatile(".globl ud2_at\nud2_at: ud2");
}

__attribute__((noinline)) static long raise_fpe(long zero)
{
    long q;
    __asm__ volatile("mov $7, %%eax\n cqo\n.globl div_at\ndiv_at: idiv %1\n"
                     : "=a"(q)
                     : "c"(zero)
                     : "rdx", "cc");
    return q;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    struct sigaction sa = {0};
    sa.sa_sigaction = report;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGILL, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);
    sigaction(SIGSEGV, &sa, NULL);

    expected_addr = (uintptr_t)ud2_at;
    if (sigsetjmp(back, 1) == 0)
        raise_ill();
    expected_addr = (uintptr_t)div_at;
    if (sigsetjmp(back, 1) == 0)
        raise_fpe(0);

    char *p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    p[0] = (char)0xc3; /* ret, in a page without execute permission */
    munmap(p + 4096, 4096);
    expected_addr = (uintptr_t)p;
    if (sigsetjmp(back, 1) == 0)
        ((void (*)(void))p)();
    expected_addr = (uintptr_t)(p + 4096);
    if (sigsetjmp(back, 1) == 0)
        ((void (*)(void))(p + 4096))();

    unsigned long base = 1;
    printf("arch_prctl(ARCH_GET_GS): %ld, base %#lx\n", syscall(SYS_arch_prctl, ARCH_GET_GS, &base), base);
    if (getauxval(AT_HWCAP2) & 2) { /* HWCAP2_FSGSBASE */
        __asm__ volatile("rdgsbase %0" : "=r"(base));
        printf("rdgsbase: %#lx\n", base);
    } else {
        printf("rdgsbase: %#lx\n", 0UL); /* what it would read */
    }
    printf("END fault_reports\n");
    return 0;
}
