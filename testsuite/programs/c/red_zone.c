/* The red zone survives indirect branches: the 128 bytes below rsp belong
 * to a leaf function (System V ABI), which may keep data there across any
 * instruction. Under dgad a lookup leaves two registers below it
 * (decision 24); these routines fill the whole red zone with a pattern,
 * take computed gotos (through a register and through a table in memory)
 * and check every byte afterwards. Prints the number of qwords that
 * changed (0). */
#include <stdio.h>

/* Fills the 16 qwords of [rsp-128, rsp) with i*0x0101010101010101 + %1
 * (clobbers rax, rcx, rdx). */
#define FILL_RED_ZONE                        \
    "xor %%ecx, %%ecx\n"                     \
    "1:\n\t"                                 \
    "mov %%rcx, %%rax\n\t"                   \
    "movabs $0x0101010101010101, %%rdx\n\t"  \
    "imul %%rdx, %%rax\n\t"                  \
    "add %1, %%rax\n\t"                      \
    "mov %%rax, -128(%%rsp,%%rcx,8)\n\t"     \
    "inc %%ecx\n\t"                          \
    "cmp $16, %%ecx\n\t"                     \
    "jne 1b\n\t"

/* Counts into %0 the qwords of the red zone that lost the pattern. */
#define COUNT_CHANGED                        \
    "xor %0, %0\n\t"                         \
    "xor %%ecx, %%ecx\n"                     \
    "3:\n\t"                                 \
    "mov %%rcx, %%rax\n\t"                   \
    "movabs $0x0101010101010101, %%rdx\n\t"  \
    "imul %%rdx, %%rax\n\t"                  \
    "add %1, %%rax\n\t"                      \
    "cmp %%rax, -128(%%rsp,%%rcx,8)\n\t"     \
    "setne %%al\n\t"                         \
    "movzbl %%al, %%eax\n\t"                 \
    "add %%rax, %0\n\t"                      \
    "inc %%ecx\n\t"                          \
    "cmp $16, %%ecx\n\t"                     \
    "jne 3b\n"

/* Called first, so that the routines are not leaves and the compiler
 * keeps none of its own data in the red zone the assembly fills. */
static long keep(long x)
{
    return x;
}
static long (*volatile opaque)(long) = keep;

/* A jump through a register. */
static long via_register(long seed)
{
    long bad;
    seed = opaque(seed);
    __asm__ volatile(FILL_RED_ZONE
                     "lea 2f(%%rip), %%rdx\n\t"
                     "jmp *%%rdx\n\t"
                     "ud2\n"
                     "2:\n\t"
                     COUNT_CHANGED
                     : "=&r"(bad)
                     : "r"(seed)
                     : "rax", "rcx", "rdx", "cc", "memory");
    return bad;
}

__attribute__((used)) static const void *table[2];

/* Two jumps through a table in memory. */
static long via_table(long seed)
{
    long bad;
    seed = opaque(seed);
    __asm__ volatile(FILL_RED_ZONE
                     "lea 2f(%%rip), %%rax\n\t"
                     "mov %%rax, table(%%rip)\n\t"
                     "lea 4f(%%rip), %%rax\n\t"
                     "mov %%rax, table+8(%%rip)\n\t"
                     "jmp *table(%%rip)\n\t"
                     "ud2\n"
                     "2:\n\t"
                     "jmp *table+8(%%rip)\n\t"
                     "ud2\n"
                     "4:\n\t"
                     COUNT_CHANGED
                     : "=&r"(bad)
                     : "r"(seed)
                     : "rax", "rcx", "rdx", "cc", "memory");
    return bad;
}

int main(void)
{
    long total = 0;
    for (long i = 0; i < 1000; i++) {
        total += via_register(i * 7919);
        total += via_table(i * 104729);
    }
    printf("red zone qwords changed by computed gotos: %ld\n", total);
    printf("END red_zone\n");
    return total != 0;
}
