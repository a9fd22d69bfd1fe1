/* fmod inlined by the compiler (gcc -O2 -fno-math-errno -ffinite-math-only,
 * or -ffast-math; SciPy's special modules contain 23+19+3 such loops, e.g.
 * behind scipy.special.fresnel for x >= 3) is an x87 fprem
 * loop: no derivative rule, reported on stderr, result constant.
 * y = fmod(x, 2.0) at x = 5.3: dy/dx = 1 expected.
 *
 *   gcc -O2 -fno-math-errno -ffinite-math-only -I<dgad>/include fmod_fprem.c -o fp -lm     # objdump: fprem
 *   DGAD_RECORD=/tmp/fp LD_PRELOAD=<dgad>/target/release/libdgad.so ./fp
 *   echo 1 > /tmp/fp/dg-output-bars; <dgad>/target/release/dg-eval /tmp/fp   # 0, expected 1 */
#include <dgad.h>
#include <math.h>
int main(void)
{
    double x = 5.3;
    dgad_input(&x);
    double y = fmod(x, 2.0);
    dgad_output(&y);
    return 0;
}
