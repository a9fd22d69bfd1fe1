/* A statically linked program that dies of SIGSEGV in its own code (issue
 * 19's crash report, decision 45): deref ← middle ← main. */
#include <stdio.h>

__attribute__((noinline)) int deref(int *p) { return *p + 1; }
__attribute__((noinline)) int middle(int *p) { return deref(p) * 2; }

int main(void) {
    printf("%d\n", middle((int *)16));
    return 0;
}
