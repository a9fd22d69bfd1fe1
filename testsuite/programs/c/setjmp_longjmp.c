/* setjmp/longjmp out of deep recursion, between several jump buffers, and
 * from inside a loop, checking that volatile locals keep their values. */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf outer, inner;
static int depth_reached;

/* Returns a value built from its frame so the recursion is neither a tail
 * call nor optimised away; it never returns at the limit. */
static int recurse(int depth, int limit)
{
    volatile char pad[64];
    pad[depth % 64] = (char)depth;
    depth_reached = depth;
    if (depth == limit)
        longjmp(outer, depth);
    if (depth > limit)
        return 0; /* unreachable; tells the compiler the recursion ends */
    return recurse(depth + 1, limit) + pad[depth % 64];
}

static int collatz_steps_with_escape(long n)
{
    int steps = 0;
    for (;;) {
        if (n == 1)
            longjmp(inner, steps + 1);
        n = (n & 1) ? 3 * n + 1 : n / 2;
        steps++;
    }
}

int main(void)
{
    for (volatile int limit = 1; limit <= 1000; limit *= 10) {
        volatile int before = limit * 3;
        int r = setjmp(outer);
        if (r == 0) {
            recurse(0, limit);
            printf("recursion returned normally (WRONG)\n");
        } else {
            printf("longjmp from depth %d returned %d, volatile local %d\n", depth_reached, r, before);
        }
    }

    volatile long total = 0;
    for (volatile long n = 1; n <= 30; n++) {
        int r = setjmp(inner);
        if (r == 0)
            collatz_steps_with_escape(n);
        else
            total += r - 1;
    }
    printf("collatz steps for 1..30: %ld\n", total);

    /* longjmp(env, 0) must make setjmp return 1. */
    volatile int zero_seen = 0;
    if (setjmp(outer) == 0) {
        longjmp(outer, 0);
    } else {
        zero_seen = 1;
    }
    printf("longjmp with 0 yields nonzero: %s\n", zero_seen ? "yes" : "no");
    printf("END setjmp_longjmp\n");
    return 0;
}
