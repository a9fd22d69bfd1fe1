/* An active float through F16C's half precision and back: a 2-byte value
 * has no index granule of its own, so dgad cannot carry the derivative and
 * must say so (the conversions were once silent constants). Prints y. */
#include <immintrin.h>
#include <stdio.h>
#include <valgrind/derivgrind.h>

__attribute__((target("f16c"))) int main(void)
{
    float x = 1.25f;
    DG_INPUTF(x);
    __m128i h = _mm_cvtps_ph(_mm_set_ss(x * 3.0f), 0);
    float y = _mm_cvtss_f32(_mm_cvtph_ps(h));
    DG_OUTPUTF(y);
    printf("y = %g\nEND half_conversions\n", (double)y);
    return 0;
}
