/* Dies of SIGSEGV in its own code, two calls deep: main -> middle -> deref
 * reads address 16. Under dgad the crash report names the functions. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int deref(volatile int *p) { return *p + 1; }
__attribute__((noinline)) int middle(volatile int *p) { return deref(p) * 2; }

int main(int argc, char **argv)
{
    volatile int *p = argc > 5 ? malloc(4) : (volatile int *)16;
    printf("%d\n", middle(p));
    return 0;
}
