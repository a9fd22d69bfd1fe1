/* The alignment-check flag (EFLAGS.AC), which CPU-feature probes toggle
 * (OpenJDK's VM does at start): natively harmless for code that makes no
 * unaligned access. Under an older dgad a guest running with AC set died
 * of SIGBUS (BUS_ADRALN) in the runtime's or the inserted code's own
 * unaligned accesses: at branches and calls, at runtime entries, and in
 * the inline check of code in writable memory (`java -version` died). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define AC 0x40000UL

int main(void)
{
    unsigned long toggled;
    /* Set AC, read the flags back, restore. */
    __asm__ volatile("pushfq\n pop %%rax\n mov %%rax, %%rcx\n xor %[ac], %%rax\n push %%rax\n popfq\n"
                     "pushfq\n pop %%rax\n xor %%rcx, %%rax\n push %%rcx\n popfq\n mov %%rax, %0\n"
                     : "=r"(toggled) : [ac] "i"(AC) : "rax", "rcx", "cc", "memory");
    printf("AC can be toggled: %lu\n", (toggled & AC) != 0);

    /* Branches, a call, a return and cpuid (a runtime entry) with AC set. */
    unsigned eax_out;
    __asm__ volatile("pushfq\n pop %%rax\n mov %%rax, %%r8\n or %[ac], %%rax\n push %%rax\n popfq\n"
                     "jmp 1f\n 1: call 2f\n jmp 3f\n 2: ret\n"
                     "3: xor %%eax, %%eax\n cpuid\n mov %%eax, %0\n"
                     "push %%r8\n popfq\n"
                     : "=r"(eax_out) : [ac] "i"(AC) : "rax", "rbx", "rcx", "rdx", "r8", "cc", "memory");
    printf("branches, call, return and cpuid with AC set: ok (max leaf > 0: %d)\n", eax_out > 0);

    /* Code in writable memory (checked at each entry under dgad), called
     * with AC set: a block of odd length at an odd address. */
    uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    static const uint8_t fn[] = {0x8d, 0x47, 0x05, /* lea eax, [rdi+5] */
                                 0x90,             /* nop */
                                 0xc3};            /* ret */
    memcpy(page + 3, fn, sizeof fn);
    int result;
    __asm__ volatile("pushfq\n pop %%rax\n mov %%rax, %%r8\n or %[ac], %%rax\n push %%rax\n popfq\n"
                     "mov $37, %%edi\n call *%[f]\n call *%[f]\n mov %%eax, %0\n"
                     "push %%r8\n popfq\n"
                     : "=r"(result) : [f] "r"(page + 3), [ac] "i"(AC)
                     : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "cc", "memory");
    printf("code in writable memory with AC set: %d\n", result);
    printf("END alignment_check\n");
    return 0;
}
