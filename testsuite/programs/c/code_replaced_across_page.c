/* A function whose code runs across a page boundary, called through a
 * pointer; then only the second page is made writable, changed and made
 * executable again (as a JIT does). The next call must run the new code.
 * Under dgad the block translated at the function's start covers both
 * pages, so the change of the second page must drop it, and every
 * thread's lookup-table entry for the function's address with it (the
 * address itself lies outside the changed page). */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
    long page = sysconf(_SC_PAGESIZE);
    unsigned char *code = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    /* mov eax, 1 ; nops up to the boundary ; add eax, 2 ; ret */
    unsigned char *start = code + page - 16;
    memset(code, 0x90, 2 * page);
    const unsigned char head[] = {0xb8, 0x01, 0x00, 0x00, 0x00};
    memcpy(start, head, sizeof head);
    const unsigned char tail_a[] = {0x83, 0xc0, 0x02, 0xc3};
    memcpy(code + page, tail_a, sizeof tail_a);
    if (mprotect(code, 2 * page, PROT_READ | PROT_EXEC) != 0) {
        perror("mprotect");
        return 1;
    }
    int (*volatile f)(void) = (int (*)(void))start;
    int before = 0;
    for (int i = 0; i < 1000; i++) {
        before += f();
    }
    /* add eax, 40 ; ret */
    if (mprotect(code + page, page, PROT_READ | PROT_WRITE) != 0) {
        perror("mprotect");
        return 1;
    }
    const unsigned char tail_b[] = {0x83, 0xc0, 0x28, 0xc3};
    memcpy(code + page, tail_b, sizeof tail_b);
    if (mprotect(code + page, page, PROT_READ | PROT_EXEC) != 0) {
        perror("mprotect");
        return 1;
    }
    int after = 0;
    for (int i = 0; i < 1000; i++) {
        after += f();
    }
    printf("before %d (3 per call), after %d (41 per call)\n", before, after);
    printf("END code_replaced_across_page\n");
    return 0;
}
