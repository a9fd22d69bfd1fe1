/* Code and data the code cache cannot keep within rel32 reach.
 *
 * 1. Code in the middle of a 3 GiB PROT_NONE reservation (as JIT compilers
 *    reserve their code ranges: V8 takes 512 MiB per isolate): no cache
 *    memory can be placed within 1 GiB of it, so its translations live far
 *    away and every RIP-relative operand (loads, a read-modify-write, lea,
 *    cmpxchg, calls and jumps through memory, SSE operands) is rewritten
 *    with the absolute address in a scratch register. A fault in such an
 *    instruction must show the guest's registers (not the scratch
 *    register's address) and the guest pc; rewritten code must be noticed.
 * 2. A RIP-relative operand ~1.98 GiB from its code (legal for rel32),
 *    above and below: the cache near the code may be out of its reach.
 * 3. Code as in 1, but 1.75 GiB from the program, calling and jumping to
 *    its functions with rel32 branches: their translations are out of
 *    each other's reach and link through a trampoline.
 * An older dgad stopped with "no code-cache memory within reach" (1, 3) and
 * "RIP-relative operand out of reach of the code cache" (2), exit 125. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#define HIDDEN __attribute__((visibility("hidden")))
extern const unsigned char blob_start[] HIDDEN, blob_end[] HIDDEN;
extern const unsigned char f_load[] HIDDEN, f_add[] HIDDEN, f_lea[] HIDDEN;
extern const unsigned char f_call[] HIDDEN, f_jmp[] HIDDEN, f_fault[] HIDDEN;
extern const unsigned char f_sd[] HIDDEN, f_cmpxchg[] HIDDEN, f_r11[] HIDDEN;
extern const unsigned char f_fault_load[] HIDDEN;
extern const unsigned char slot_a[] HIDDEN, slot_fn[] HIDDEN, slot_d[] HIDDEN;

/* Position-independent code copied into the reservation; its RIP-relative
 * operands point at the slots at its end. */
__asm__(".pushsection .rodata\n"
        ".intel_syntax noprefix\n"
        ".p2align 6\n"
        ".globl blob_start, blob_end, f_load, f_add, f_lea, f_call, f_jmp\n"
        ".globl f_fault, f_fault_load, f_sd, f_cmpxchg, f_r11, slot_a, slot_fn, slot_d\n"
        "blob_start:\n"
        "f_load: mov rax, qword ptr [rip + slot_a]\n ret\n"
        "f_add: add qword ptr [rip + slot_a], rdi\n mov rax, qword ptr [rip + slot_a]\n ret\n"
        "f_lea: lea rax, [rip + slot_a]\n ret\n"
        "f_call: sub rsp, 8\n call qword ptr [rip + slot_fn]\n add rsp, 8\n add rax, 1\n ret\n"
        "f_jmp: jmp qword ptr [rip + slot_fn]\n"
        "f_fault: mov r11, rdi\n"
        "f_fault_load: mov rax, qword ptr [rip + slot_a + 4096]\n ret\n"
        "f_sd: movsd xmm0, qword ptr [rip + slot_d]\n mulsd xmm0, qword ptr [rip + slot_d]\n ret\n"
        "f_cmpxchg: mov rax, rdi\n lock cmpxchg qword ptr [rip + slot_a], rsi\n ret\n"
        "f_r11: mov r11, qword ptr [rip + slot_a]\n lea rax, [r11 + 1]\n ret\n"
        ".p2align 3\n"
        "slot_a: .quad 0\n"
        "slot_fn: .quad 0\n"
        "slot_d: .double 0\n"
        "blob_end:\n"
        ".att_syntax prefix\n"
        ".popsection\n");

static unsigned char *page;

static void *at(const unsigned char *label)
{
    return page + (label - blob_start);
}

static long twice(long x)
{
    return 2 * x;
}

static sigjmp_buf back;
static volatile uint64_t fault_r11, fault_rip, fault_addr;

static void on_segv(int sig, siginfo_t *info, void *ucv)
{
    (void)sig;
    ucontext_t *uc = ucv;
    fault_r11 = (uint64_t)uc->uc_mcontext.gregs[REG_R11];
    fault_rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    fault_addr = (uint64_t)info->si_addr;
    siglongjmp(back, 1);
}

static void crowded_code(void)
{
    size_t len = 3UL << 30;
    unsigned char *r = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) {
        perror("mmap");
        return;
    }
    page = r + len / 2;
    if (mprotect(page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
        perror("mprotect");
        return;
    }
    memcpy(page, blob_start, (size_t)(blob_end - blob_start));
    uint64_t fn = (uint64_t)twice;
    memcpy(at(slot_fn), &fn, sizeof fn);
    *(uint64_t *)at(slot_a) = 40;
    *(double *)at(slot_d) = 1.5;

    long (*load)(void) = (long (*)(void))at(f_load);
    long (*add)(long) = (long (*)(long))at(f_add);
    void *(*lea)(void) = (void *(*)(void))at(f_lea);
    long (*call)(long) = (long (*)(long))at(f_call);
    long (*jmp)(long) = (long (*)(long))at(f_jmp);
    double (*sd)(void) = (double (*)(void))at(f_sd);
    long (*cas)(long, long) = (long (*)(long, long))at(f_cmpxchg);
    long (*r11)(void) = (long (*)(void))at(f_r11);
    long (*fault)(long) = (long (*)(long))at(f_fault);

    printf("load: %ld\n", load());
    printf("add: %ld\n", add(2));
    printf("lea names the slot: %d\n", lea() == at(slot_a));
    printf("call through a slot: %ld\n", call(21));
    printf("jump through a slot: %ld\n", jmp(21));
    printf("movsd/mulsd: %g\n", sd());
    printf("cmpxchg that matches: %ld, slot %ld\n", cas(42, 7), load());
    printf("cmpxchg that does not: %ld, slot %ld\n", cas(42, 9), load());
    printf("load into r11: %ld\n", r11());

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    if (sigsetjmp(back, 1) == 0) {
        fault(0x5a5a5a5a5a5aL);
        puts("no fault");
    } else {
        printf("fault: r11 is the guest's %d, pc is the load %d, address is past the page %d\n",
               fault_r11 == 0x5a5a5a5a5a5aUL, fault_rip == (uint64_t)at(f_fault_load),
               fault_addr == (uint64_t)at(slot_a) + 4096);
    }
    signal(SIGSEGV, SIG_DFL);

    /* Rewritten code: the load now reads slot_fn (its rel32 moves by 8). */
    int32_t rel;
    memcpy(&rel, page + (f_load - blob_start) + 3, sizeof rel);
    rel += 8;
    memcpy(page + (f_load - blob_start) + 3, &rel, sizeof rel);
    printf("load after the code changed reads the function slot: %d\n", (uint64_t)load() == fn);
    munmap(r, len);
}

/* mov rax, [rip + disp32]; ret  and  mov [rip + disp32], rdi; ret */
static void far_data(long direction)
{
    size_t len = 4UL << 30;
    unsigned char *r = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) {
        perror("mmap");
        return;
    }
    munmap(r, len);
    unsigned char *code = direction > 0 ? r + (1UL << 30) : r + len - (1UL << 30);
    unsigned char *data = code + direction * 0x7f000000L;
    int prot = PROT_READ | PROT_WRITE;
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
    if (mmap(code, 4096, prot | PROT_EXEC, flags, -1, 0) != code ||
        mmap(data, 4096, prot, flags, -1, 0) != data) {
        perror("mmap");
        return;
    }
    *(long *)data = 1234567;
    static const unsigned char load[] = {0x48, 0x8b, 0x05, 0, 0, 0, 0, 0xc3};
    static const unsigned char store[] = {0x48, 0x89, 0x3d, 0, 0, 0, 0, 0xc3};
    memcpy(code, load, sizeof load);
    memcpy(code + 64, store, sizeof store);
    int32_t rel = (int32_t)(data - (code + 7));
    memcpy(code + 3, &rel, sizeof rel);
    rel = (int32_t)(data + 8 - (code + 64 + 7));
    memcpy(code + 64 + 3, &rel, sizeof rel);
    long (*get)(void) = (long (*)(void))code;
    void (*put)(long) = (void (*)(long))(code + 64);
    put(7654321);
    printf("data %s the code by 1.98 GiB: load %ld, store %ld\n",
           direction > 0 ? "above" : "below", get(), ((long *)data)[1]);
    munmap(code, 4096);
    munmap(data, 4096);
}

/* sub rsp, 8; call rel32 twice; add rsp, 8; add rax, 1; ret
 * and  jmp rel32 twice */
static void crowded_near_the_program(void)
{
    /* Below the program (its heap is above it), ending 256–512 MiB below
     * its code so that the middle of the reservation is ~1.75 GiB away. */
    size_t len = 3UL << 30;
    unsigned char *r = MAP_FAILED;
    for (uintptr_t gap = 256UL << 20; gap <= 512UL << 20 && r == MAP_FAILED; gap += 64UL << 20) {
        uintptr_t end = ((uintptr_t)twice & ~((1UL << 21) - 1)) - gap;
        r = mmap((void *)(end - len), len, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        if (r != MAP_FAILED && r != (unsigned char *)(end - len)) {
            munmap(r, len); /* a kernel without MAP_FIXED_NOREPLACE */
            r = MAP_FAILED;
        }
    }
    if (r == MAP_FAILED) {
        perror("mmap below the program");
        return;
    }
    unsigned char *code = r + len / 2;
    if (mprotect(code, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
        perror("mprotect");
        return;
    }
    static const unsigned char call[] = {0x48, 0x83, 0xec, 0x08, 0xe8, 0, 0, 0, 0,
                                         0x48, 0x83, 0xc4, 0x08, 0x48, 0x83, 0xc0, 0x01, 0xc3};
    memcpy(code, call, sizeof call);
    int32_t rel = (int32_t)((unsigned char *)twice - (code + 9));
    memcpy(code + 5, &rel, sizeof rel);
    code[64] = 0xe9;
    rel = (int32_t)((unsigned char *)twice - (code + 64 + 5));
    memcpy(code + 65, &rel, sizeof rel);
    long (*via_call)(long) = (long (*)(long))code;
    long (*via_jmp)(long) = (long (*)(long))(code + 64);
    long sum = 0;
    for (long i = 0; i < 100000; i++)
        sum += via_call(i) + via_jmp(i);
    printf("rel32 calls and jumps 1.75 GiB into the program: %ld\n", sum);
    munmap(r, len);
}

int main(void)
{
    crowded_code();
    crowded_near_the_program();
    far_data(1);
    far_data(-1);
    printf("END far_code\n");
    return 0;
}
