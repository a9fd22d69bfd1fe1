/* Record-mode benchmark of code without active data: a recursive
 * Fibonacci (one call, two pushes, two pops and a return per call). Its
 * cost under record mode is the shadow traffic of the stack, which every
 * program pays on its passive parts (a value's shadow and the value itself
 * are touched back to back). Usage: call_heavy [N]; prints fib(N). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static long fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 32;
    printf("fib(%d) = %ld\n", n, fib(n));
    return 0;
}
