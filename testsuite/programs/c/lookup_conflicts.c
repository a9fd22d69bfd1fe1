/* Indirect-branch targets whose addresses share their low 16 bits (placed
 * 64 KiB apart here) share one set of dgad's indirect-branch lookup table.
 * Used in turn, they must both be found in the table (the set has two
 * ways) rather than evict each other at every use. Two pairs: functions
 * called through pointers, and the targets of a computed jump that read the
 * status flags set before the jump (the second way's probe must leave them
 * alone). A third target in the second pair's set sets the flags before it
 * reads them: a jump to a flag-reading target regularly reaches its
 * translation first, whose check of the target must not touch the flags
 * either (regression: a `cmp` there gave wrong sums). The suite compares
 * the output with the native run and counts the lookups that missed
 * (`lookup_conflicts_stay_in_the_table`). */
#include <stdio.h>

#define ROUNDS 100000

__attribute__((aligned(65536), noinline)) static long scale_a(long x)
{
    return 3 * x + 1;
}

__attribute__((aligned(65536), noinline)) static long scale_b(long x)
{
    return x / 2 - 7;
}

/* jump_with_flags(a, b, target): `cmp b, a`, then `jmp *target`. The
 * targets lie 256 bytes past consecutive 64 KiB boundaries (a set of their
 * own, apart from the functions above); one returns CF, one ZF + 2, and
 * one 5 after setting the flags itself. */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl jump_with_flags\n"
        ".hidden jump_with_flags\n"
        "jump_with_flags:\n"
        "    cmp %rsi, %rdi\n"
        "    jmp *%rdx\n"
        ".p2align 16\n"
        ".skip 256\n"
        ".globl flag_target_below\n"
        ".hidden flag_target_below\n"
        "flag_target_below:\n"
        "    setb %al\n"
        "    movzbl %al, %eax\n"
        "    ret\n"
        ".p2align 16\n"
        ".skip 256\n"
        ".globl flag_target_equal\n"
        ".hidden flag_target_equal\n"
        "flag_target_equal:\n"
        "    sete %al\n"
        "    movzbl %al, %eax\n"
        "    addl $2, %eax\n"
        "    ret\n"
        ".p2align 16\n"
        ".skip 256\n"
        ".globl flag_target_own\n"
        ".hidden flag_target_own\n"
        "flag_target_own:\n"
        "    xorl %eax, %eax\n"
        "    addl $5, %eax\n"
        "    ret\n");

int jump_with_flags(unsigned long a, unsigned long b, const void *target);
extern const char flag_target_below[], flag_target_equal[], flag_target_own[];

int main(void)
{
    long (*volatile scales[2])(long) = {scale_a, scale_b};
    const void *volatile targets[2] = {flag_target_below, flag_target_equal};
    unsigned long same_set = ((unsigned long)scale_a ^ (unsigned long)scale_b) & 0xffff;
    same_set |= ((unsigned long)flag_target_below ^ (unsigned long)flag_target_equal) & 0xffff;
    same_set |= ((unsigned long)flag_target_below ^ (unsigned long)flag_target_own) & 0xffff;
    printf("pairs share their low 16 bits: %s\n", same_set == 0 ? "yes" : "no");
    unsigned long calls = 0, flags = 0;
    for (long i = 0; i < ROUNDS; i++) {
        calls = calls * 31 + (unsigned long)scales[i & 1](i);
        unsigned long a = (unsigned long)(i % 5), b = (unsigned long)(i % 3);
        flags = flags * 7 + (unsigned long)jump_with_flags(a, b, targets[(i >> 1) & 1]);
        flags = flags * 7 + (unsigned long)jump_with_flags(b, a, targets[1 - ((i >> 1) & 1)]);
        if (i % 8 == 0) {
            flags = flags * 7 + (unsigned long)jump_with_flags(a, b, flag_target_own);
            flags = flags * 7 + (unsigned long)jump_with_flags(a, b, targets[(i >> 3) & 1]);
        }
    }
    printf("calls %lu\nflags %lu\n", calls, flags);
    printf("below: %d %d %d, equal: %d %d %d\n", jump_with_flags(1, 2, flag_target_below),
           jump_with_flags(2, 2, flag_target_below), jump_with_flags(3, 2, flag_target_below),
           jump_with_flags(1, 2, flag_target_equal), jump_with_flags(2, 2, flag_target_equal),
           jump_with_flags(3, 2, flag_target_equal));
    printf("END lookup_conflicts\n");
    return 0;
}
