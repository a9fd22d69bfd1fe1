/* The W^X pattern of JIT compilers: one memfd mapped twice, shared, once
 * readable and writable and once readable and executable. Code is written
 * through the first view and run through the second, then rewritten (no
 * mprotect, no write through the executable view) and run again: natively
 * each call executes the current bytes. Under dgad a shared executable
 * mapping counts as code that may change, checked at each block entry. */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rewrite_rounds.h"

int main(void)
{
    int fd = memfd_create("dgad-dual-mapped-code", 0);
    if (fd < 0 || ftruncate(fd, 4096) != 0)
        return 1;
    unsigned char *rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    unsigned char *rx = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
    if (rw == MAP_FAILED || rx == MAP_FAILED)
        return 1;
    rewrite_rounds(rw, (int (*)(int))rx);
    printf("END dual_mapped_code\n");
    return 0;
}
