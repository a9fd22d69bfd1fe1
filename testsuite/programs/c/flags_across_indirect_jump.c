/* Status flags live across indirect jumps (hand-written computed gotos,
 * through a register and through a table in memory): the target reads the
 * flags the code before the jump set. Under dgad these jumps go through the
 * indirect-branch lookup, which must leave the flags alone (only returns,
 * indirect calls and jumps through the GOT may clobber them: no flags are
 * passed between functions). */
#include <stdio.h>

/* Jumps through a register to one of two targets; the first reads CF, the
 * second ZF, both as `cmp b, a` left them. */
static int via_register(unsigned long a, unsigned long b, int which)
{
    int r;
    __asm__ volatile("lea 1f(%%rip), %%rcx\n\t"
                     "lea 2f(%%rip), %%rdx\n\t"
                     "test %3, %3\n\t"
                     "cmovnz %%rdx, %%rcx\n\t"
                     "cmp %2, %1\n\t"
                     "jmp *%%rcx\n"
                     "1:\n\t"
                     "setb %%al\n\t"
                     "movzbl %%al, %0\n\t"
                     "jmp 3f\n"
                     "2:\n\t"
                     "sete %%al\n\t"
                     "movzbl %%al, %0\n\t"
                     "addl $2, %0\n"
                     "3:\n"
                     : "=&r"(r)
                     : "r"(a), "r"(b), "r"(which)
                     : "rax", "rcx", "rdx", "cc");
    return r;
}

/* Jumps through a table of four targets in memory, indexed by `which`;
 * each target reads a different flag of `sub b, a`. */
static int via_table(long a, long b, long which)
{
    int r;
    __asm__ volatile("lea 5f(%%rip), %%rdx\n\t"
                     "mov %1, %%rax\n\t"
                     "sub %2, %%rax\n\t"
                     "jmp *(%%rdx,%3,8)\n"
                     ".pushsection .data.rel.local,\"aw\"\n"
                     ".balign 8\n"
                     "5: .quad 10f, 11f, 12f, 13f\n"
                     ".popsection\n"
                     "10: setl %%al\n\t jmp 19f\n"
                     "11: sets %%al\n\t jmp 19f\n"
                     "12: setnz %%al\n\t jmp 19f\n"
                     "13: seto %%al\n"
                     "19: movzbl %%al, %0\n"
                     : "=&r"(r)
                     : "r"(a), "r"(b), "r"(which)
                     : "rax", "rdx", "cc");
    return r;
}

int main(void)
{
    static const long values[] = {0, 1, 2, 7, -1, -5, 0x7fffffffffffffffL, -0x7fffffffffffffffL - 1};
    const int n = sizeof values / sizeof values[0];
    unsigned long sum_register = 0, sum_table = 0;
    for (int round = 0; round < 1000; round++) {
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                int which = (round + i + j) & 3;
                sum_register = sum_register * 3 + (unsigned)via_register((unsigned long)values[i], (unsigned long)values[j], which & 1);
                sum_table = sum_table * 5 + (unsigned)via_table(values[i], values[j], which);
            }
        }
        if (round == 0) {
            printf("first round: %lu %lu\n", sum_register, sum_table);
        }
    }
    for (int i = 0; i < n; i++) {
        printf("%ld vs 2: below %d equal %d; less %d sign %d nonzero %d overflow %d\n", values[i],
               via_register((unsigned long)values[i], 2, 0), via_register((unsigned long)values[i], 2, 1) - 2,
               via_table(values[i], 2, 0), via_table(values[i], 2, 1), via_table(values[i], 2, 2),
               via_table(values[i], 2, 3));
    }
    printf("sums: %lu %lu\n", sum_register, sum_table);
    printf("END flags_across_indirect_jump\n");
    return 0;
}
