/* Range of the too-broad rounding-trick rule (FINDINGS #2): y = x*2^(k-2) + 1.3*2^k,
 * dy/dx = 2^(k-2) expected; dgad gives 0 exactly for k = 52, 53 (double) and
 * k = 23, 24 (float), right elsewhere (k = 44..60, 18..30 tried).
 *   gcc -O2 -I<dgad>/include rounding_trick_scan.c -o rs -lm
 *   DGAD_RECORD=/tmp/rs LD_PRELOAD=<dgad>/target/release/libdgad.so ./rs
 *   printf "1 0\n0 1\n" > /tmp/rs/dg-input-dots; <dgad>/target/release/dg-eval --forward /tmp/rs */
#include <dgad.h>
#include <math.h>
#include <stdio.h>
int main(void)
{
    double x = -0.221; float xf = -0.221f;
    dgad_input(&x); dgad_input(&xf);
    for (int k = 44; k <= 60; k++) { volatile double C = ldexp(1.3, k); double y = x * ldexp(1.0, k - 2) + C; dgad_output(&y); }
    for (int k = 18; k <= 30; k++) { volatile float C = ldexpf(1.3f, k); float y = xf * ldexpf(1.0f, k - 2) + C; dgad_output(&y); }
    return 0;
}
