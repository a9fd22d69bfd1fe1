/* Instructions that may leave their destination unwritten must not drop
 * the index it holds when their own inputs are passive (regressions found
 * through numpy's sort): a masked store of passive values that skips a lane
 * holding an active value, and a cmov of a passive value into a register
 * holding an active value's bits, with the condition false.
 * Usage: partial_writes X; prints y1 = 3x (lane 1 kept), y2 = x*x (kept). */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/derivgrind.h>

__attribute__((target("avx"), noinline)) static double masked_store(double x)
{
    double lanes[4] = {0.0, 3.0 * x, 0.0, 0.0};
    __m256d passive = _mm256_set1_pd(7.0);
    __m256i mask = _mm256_set_epi64x(-1, -1, 0, -1); /* lanes 0, 2, 3 */
    _mm256_maskstore_pd(lanes, mask, passive);
    return lanes[1];
}

__attribute__((noinline)) static double cmov_kept(double x, long never)
{
    double v = x * x;
    long bits, other = 42;
    memcpy(&bits, &v, sizeof bits);
    /* bits = never ? other : bits, as a cmov whose condition is false. */
    __asm__("test %2, %2\n\tcmovne %1, %0" : "+r"(bits) : "r"(other), "r"(never) : "cc");
    double out;
    memcpy(&out, &bits, sizeof out);
    return out;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fputs("usage: partial_writes X\n", stderr);
        return 2;
    }
    double x = strtod(argv[1], NULL);
    DG_INPUTF(x);
    double y1 = masked_store(x);
    double y2 = cmov_kept(x, argc - 2);
    DG_OUTPUTF(y1);
    DG_OUTPUTF(y2);
    printf("%.17g\n%.17g\n", y1, y2);
    return 0;
}
