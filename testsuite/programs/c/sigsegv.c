/* A SIGSEGV handler that siglongjmps back to main, three times in a row.
 * sigsetjmp(env, 1) saves the signal mask so SIGSEGV is unblocked again
 * after each jump; if it were not, the second fault would kill the process.
 * The handler also reports the faulting address and si_code, which a binary
 * translator has to reproduce as if the original code had faulted. */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static sigjmp_buf env;
static volatile sig_atomic_t faults;
static void *volatile fault_addr;
static volatile int fault_code;

static void on_segv(int sig, siginfo_t *info, void *ctx)
{
    (void)sig;
    (void)ctx;
    faults++;
    fault_addr = info->si_addr;
    fault_code = info->si_code;
    siglongjmp(env, faults);
}

static const char *code_name(int code)
{
    switch (code) {
    case SEGV_MAPERR: return "SEGV_MAPERR";
    case SEGV_ACCERR: return "SEGV_ACCERR";
    default: return "other";
    }
}

/* volatile keeps the compiler from proving the pointers invalid and
 * replacing the loads with a trap. */
static int load(int *volatile p) { return *p; }
static void store(int *volatile p, int v) { *p = v; }

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);

    long page = sysconf(_SC_PAGESIZE);
    char *guard = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (guard == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    int *targets[3] = {
        (int *)(uintptr_t)16,          /* unmapped: read */
        (int *)(guard + 64),           /* PROT_NONE: read */
        (int *)(uintptr_t)0xdead0000,  /* unmapped: write */
    };

    /* Locals changed between sigsetjmp and siglongjmp must be volatile. */
    volatile int attempts = 0;
    volatile int sum = 0;
    int jumped = sigsetjmp(env, 1);
    if (jumped) {
        printf("fault %d: %s, address matches: %s\n", jumped, code_name(fault_code),
               fault_addr == (void *)targets[jumped - 1] ? "yes" : "no");
    }
    if (attempts < 3) {
        int i = attempts++;
        if (i == 2)
            store(targets[i], 42);
        else
            sum += load(targets[i]);
        printf("access %d did not fault\n", i);
    }
    printf("faults caught: %d, attempts: %d, sum: %d\n", (int)faults, attempts, sum);

    /* Signals must still work normally after the jumps. */
    sigset_t mask;
    sigprocmask(SIG_SETMASK, NULL, &mask);
    printf("SIGSEGV blocked after jumps: %s\n", sigismember(&mask, SIGSEGV) ? "yes" : "no");
    munmap(guard, (size_t)page);
    printf("END sigsegv\n");
    return 0;
}
