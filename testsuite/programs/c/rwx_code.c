/* Writes machine code into a page mapped readable, writable and executable
 * and runs it, then rewrites it in place (no mprotect) and runs it again,
 * three times: natively each run executes the current bytes. Under dgad
 * code from writable memory is checked at each entry, so a stale
 * translation never runs. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

int main(void)
{
    unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return 1;
    int (*function)(int) = (int (*)(int))page;
    const unsigned char return_1[] = {0xb8, 1, 0, 0, 0, 0xc3};  /* mov eax, 1; ret */
    const unsigned char return_2[] = {0xb8, 2, 0, 0, 0, 0xc3};  /* mov eax, 2; ret */
    const unsigned char twice[] = {0x8d, 0x04, 0x3f, 0xc3};     /* lea eax, [rdi+rdi]; ret */
    int total = 0;
    for (int round = 0; round < 3; round++) {
        memcpy(page, return_1, sizeof return_1);
        int a = function(0);
        memcpy(page, return_2, sizeof return_2);
        int b = function(0);
        memcpy(page, twice, sizeof twice);
        int c = function(21);
        printf("round %d: %d %d %d\n", round, a, b, c);
        total += a + b + c;
    }
    printf("total %d\n", total);
    printf("END rwx_code\n");
    return 0;
}
