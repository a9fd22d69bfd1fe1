/* Shared by the programs that rewrite code between calls (rwx_code.c,
 * dual_mapped_code.c): three rounds of writing small functions through
 * `write_view` and calling them through `function`, which executes the same
 * bytes; natively every call runs the bytes just written. Prints each
 * round's results and their total. */
#include <stdio.h>
#include <string.h>

static int rewrite_rounds(unsigned char *write_view, int (*function)(int))
{
    const unsigned char return_1[] = {0xb8, 1, 0, 0, 0, 0xc3};  /* mov eax, 1; ret */
    const unsigned char return_2[] = {0xb8, 2, 0, 0, 0, 0xc3};  /* mov eax, 2; ret */
    const unsigned char twice[] = {0x8d, 0x04, 0x3f, 0xc3};     /* lea eax, [rdi+rdi]; ret */
    int total = 0;
    for (int round = 0; round < 3; round++) {
        memcpy(write_view, return_1, sizeof return_1);
        int a = function(0);
        memcpy(write_view, return_2, sizeof return_2);
        int b = function(0);
        memcpy(write_view, twice, sizeof twice);
        int c = function(21 + round);
        printf("round %d: %d %d %d\n", round, a, b, c);
        total += a + b + c;
    }
    printf("total %d\n", total);
    return total;
}
