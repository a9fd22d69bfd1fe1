/* Asynchronous preemption as Go's runtime does it: a signal handler makes
 * the interrupted thread "call" a routine (it pushes the interrupted pc
 * and points the pc at the routine), which saves the flags and the
 * registers it uses, does its work, restores them with `popfq` and returns
 * with `pop rbp; ret` to the instruction it interrupted — possibly between
 * a `cmp` and the `jl` reading its flags. Record mode once took the flags
 * as dead before every `ret` (the ABI passes none) and its shadow copy for
 * the `pop rbp` clobbered them: Go programs computed wrong results.
 * 1. Flags set by `cmp` before a call of such a routine, read after it.
 * 2. Four threads run Go's code for `for i < n { s += i*i%7 }` while the
 *    main thread preempts them with SIGURG every 200 µs. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

/* The routine: flags and rax, rcx, rdx saved, clobbered, restored. */
extern void preempted(void);
__asm__(".globl preempted\n"
        "preempted:\n"
        "    push %rbp\n"
        "    mov %rsp, %rbp\n"
        "    pushfq\n"
        "    push %rax\n"
        "    push %rcx\n"
        "    push %rdx\n"
        "    mov $0xdead, %eax\n"
        "    xor %ecx, %ecx\n"
        "    cmp %rax, %rcx\n"
        "    pop %rdx\n"
        "    pop %rcx\n"
        "    pop %rax\n"
        "    popfq\n"
        "    pop %rbp\n"
        "    ret\n");

/* CF, SF and ZF after `cmp $2, 1` and a call of `preempted` (3: CF and SF). */
extern long flags_after_call(void);
__asm__(".globl flags_after_call\n"
        "flags_after_call:\n"
        "    push %rbx\n"
        "    mov $1, %eax\n"
        "    cmp $2, %rax\n"
        "    call preempted\n"
        "    setb %al\n"
        "    sets %bl\n"
        "    shl $1, %bl\n"
        "    or %bl, %al\n"
        "    setz %bl\n"
        "    shl $2, %bl\n"
        "    or %bl, %al\n"
        "    movzbl %al, %eax\n"
        "    pop %rbx\n"
        "    ret\n");

/* Go 1.19's code for the loop, `cmp` and `jl` at its head; registers
 * only (the signal handler pushes onto the interrupted stack, so nothing
 * may live in a red zone while it can arrive). */
extern long go_loop(long n);
__asm__(".globl go_loop\n"
        "go_loop:\n"
        "    push %rbx\n"
        "    xor %ecx, %ecx\n"
        "    xor %edx, %edx\n"
        "    mov %rdi, %r9\n"
        "    jmp 2f\n"
        "1:  lea 1(%rdx), %rbx\n"
        "    imul %rdx, %rdx\n"
        "    mov %rax, %rsi\n"
        "    movabs $0x4924924924924925, %rax\n"
        "    mov %rdx, %rdi\n"
        "    imul %rdx\n"
        "    sar $1, %rdx\n"
        "    mov %rdi, %r8\n"
        "    sar $63, %rdi\n"
        "    sub %rdi, %rdx\n"
        "    lea (%rdx,%rdx,2), %rdi\n"
        "    lea (%rdx,%rdi,2), %rdi\n"
        "    sub %rdi, %r8\n"
        "    add %r8, %rcx\n"
        "    mov %rsi, %rax\n"
        "    mov %rbx, %rdx\n"
        "2:  cmp %r9, %rdx\n"
        "    jl 1b\n"
        "    mov %rcx, %rax\n"
        "    pop %rbx\n"
        "    ret\n");

static void on_urg(int sig, siginfo_t *info, void *ucv)
{
    (void)sig;
    (void)info;
    greg_t *g = ((ucontext_t *)ucv)->uc_mcontext.gregs;
    g[REG_RSP] -= 8;
    *(greg_t *)g[REG_RSP] = g[REG_RIP];
    g[REG_RIP] = (greg_t)preempted;
}

#define N 20000000L
#define THREADS 4
static _Atomic pid_t tids[THREADS];
static long sums[THREADS];
static atomic_int finished;

static void *worker(void *arg)
{
    long k = (long)arg;
    atomic_store(&tids[k], (pid_t)syscall(SYS_gettid));
    sums[k] = go_loop(N);
    atomic_fetch_add(&finished, 1);
    return NULL;
}

int main(void)
{
    printf("flags after the call: %ld\n", flags_after_call());
    long want = go_loop(N);
    struct sigaction sa = {0};
    sa.sa_sigaction = on_urg;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGURG, &sa, NULL);
    pthread_t t[THREADS];
    for (long k = 0; k < THREADS; k++)
        pthread_create(&t[k], NULL, worker, (void *)k);
    while (atomic_load(&finished) < THREADS) {
        for (int k = 0; k < THREADS; k++) {
            pid_t tid = atomic_load(&tids[k]);
            if (tid)
                syscall(SYS_tgkill, getpid(), tid, SIGURG);
        }
        usleep(200);
    }
    int wrong = 0;
    for (int k = 0; k < THREADS; k++) {
        pthread_join(t[k], NULL);
        wrong += sums[k] != want;
    }
    printf("preempted loops with a wrong sum: %d of %d\n", wrong, THREADS);
    printf("END async_preempt\n");
    return 0;
}
