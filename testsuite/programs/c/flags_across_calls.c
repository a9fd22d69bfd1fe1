/* Status flags passed between functions by hand-written code: a function
 * that returns its result in CF and ZF, reached through a function
 * pointer, and a function that reads the flags its caller set before an
 * indirect call. The System V ABI passes no flags, so compilers never do
 * this, but assembly may, and natively it works. Under dgad's null mode the
 * lookups of `call r/m` and `ret` leave the flags alone (decision 21); in
 * record mode the instrumentation may clobber them at calls and returns
 * (decision 10), so this program is in the null-mode matrix only. */
#include <stdio.h>

/* compare_in_flags(a, b): `cmp b, a` and return: CF = a < b (unsigned),
 * ZF = a == b. flags_to_int(): reads the caller's CF and ZF. */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl compare_in_flags\n"
        ".hidden compare_in_flags\n"
        "compare_in_flags:\n"
        "    cmp %rsi, %rdi\n"
        "    ret\n"
        ".p2align 4\n"
        ".globl flags_to_int\n"
        ".hidden flags_to_int\n"
        "flags_to_int:\n"
        "    setb %al\n"
        "    sete %dl\n"
        "    movzbl %al, %eax\n"
        "    movzbl %dl, %edx\n"
        "    lea (%rax,%rdx,2), %eax\n"
        "    ret\n"
        /* through_return(a, b, f): calls f(a, b) through a pointer, then
         * reads the flags f returned (a tail jump to flags_to_int). */
        ".p2align 4\n"
        ".globl through_return\n"
        ".hidden through_return\n"
        "through_return:\n"
        "    call *%rdx\n"
        "    jmp flags_to_int\n"
        /* into_call(a, b, g): `cmp b, a`, then calls g through a pointer,
         * which reads those flags. */
        ".p2align 4\n"
        ".globl into_call\n"
        ".hidden into_call\n"
        "into_call:\n"
        "    sub $8, %rsp\n"
        "    cmp %rsi, %rdi\n"
        "    call *%rdx\n"
        "    add $8, %rsp\n"
        "    ret\n");

int compare_in_flags(unsigned long a, unsigned long b);
int flags_to_int(void);
int through_return(unsigned long a, unsigned long b, void *f);
int into_call(unsigned long a, unsigned long b, void *g);

int main(void)
{
    static const unsigned long values[] = {0, 1, 2, 7, 0x8000000000000000UL, ~0UL};
    const int n = sizeof values / sizeof values[0];
    void *volatile f = (void *)compare_in_flags, *volatile g = (void *)flags_to_int;
    unsigned long sum = 0;
    for (int round = 0; round < 2000; round++) {
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                sum = sum * 3 + (unsigned)through_return(values[i], values[j], f);
                sum = sum * 5 + (unsigned)into_call(values[i], values[j], g);
            }
        }
    }
    for (int i = 0; i < n; i++) {
        printf("%lu vs 2: returned below+2*equal %d, passed %d\n", values[i], through_return(values[i], 2, f),
               into_call(values[i], 2, g));
    }
    printf("sum %lu\n", sum);
    printf("END flags_across_calls\n");
    return 0;
}
