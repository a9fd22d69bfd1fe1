/* Writes machine code into a page mapped readable, writable and executable
 * and runs it, then rewrites it in place (no mprotect) and runs it again,
 * three times: natively each run executes the current bytes. Under dgad
 * code from writable memory is checked at each entry, so a stale
 * translation never runs. */
#include <stdio.h>
#include <sys/mman.h>

#include "rewrite_rounds.h"

int main(void)
{
    unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return 1;
    rewrite_rounds(page, (int (*)(int))page);
    printf("END rwx_code\n");
    return 0;
}
