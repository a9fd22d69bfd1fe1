/* Memory calls of the program that reach where record mode keeps its
 * shadow memory. A MAP_FIXED mapping over 2 TiB from 0x050000000000 is
 * free address space natively, but under record mode it is the shadow of
 * the program's executable and heap (0x5500... -> 0x0500...): an older
 * dgad let the kernel replace those shadow pages, and the derivative of a
 * value on the heap became 0, silently. Now the call fails (ENOMEM) with
 * a note; munmap and mprotect there fail the same way, and a hint there
 * lands elsewhere. Usage: shadow_range_maps X; prints y = x*x (read back
 * from the heap after the calls) and what each call returned. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <valgrind/derivgrind.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fputs("usage: shadow_range_maps X\n", stderr);
        return 2;
    }
    double x = strtod(argv[1], NULL);
    DG_INPUTF(x);
    volatile double *on_heap = malloc(sizeof *on_heap);
    *on_heap = x * x;

    void *at = (void *)0x050000000000UL;
    size_t len = 2UL << 40;
    void *p = mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    fprintf(stderr, "MAP_FIXED: %s\n", p == MAP_FAILED ? strerror(errno) : "mapped");
    if (p != MAP_FAILED)
        munmap(p, len);
    fprintf(stderr, "munmap: %s\n", munmap(at, 1UL << 30) ? strerror(errno) : "done");
    fprintf(stderr, "mprotect: %s\n", mprotect(at, 4096, PROT_NONE) ? strerror(errno) : "done");
    void *q = mmap(at, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    fprintf(stderr, "hint: %s\n", q == MAP_FAILED ? strerror(errno) : q == at ? "there" : "elsewhere");

    double y = *on_heap;
    DG_OUTPUTF(y);
    printf("%.17g\n", y);
    return 0;
}
