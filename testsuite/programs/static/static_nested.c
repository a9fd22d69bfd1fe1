/* A statically linked program whose image asks for an executable stack
 * (PT_GNU_STACK with PF_X): GCC's nested function `add` is called through
 * a trampoline it writes on the stack (decision 45: the host maps the
 * stack as the kernel would). */
#include <stdio.h>

static int apply(int (*f)(int), int x) { return f(x); }

int main(int argc, char **argv) {
    (void)argv;
    int k = argc + 41;
    int add(int x) { return x + k; }
    printf("%d\n", apply(add, 1));
    return 0;
}
