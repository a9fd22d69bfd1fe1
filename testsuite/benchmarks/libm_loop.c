/* Record-mode benchmark of libm calls, for scripts/bench_libm.py.
 *
 * Usage: libm_loop [CALLS [X]]   (defaults 1000000 and 0.7)
 *
 * AD input: x. A running value s = x goes through CALLS calls of glibc's
 * sin, exp and pow in turn, every one with active arguments:
 *     s = sin(s + t_k),  s = exp(x - s),  s = pow(s, x),  ...
 * where t_k = 1e-5 k is passive and sweeps sin's argument across [0, 10],
 * through all of glibc's range-reduction paths. The map is contractive
 * enough that ds/dx stays finite. AD output: the final s.
 *
 * Prints the result (%.17g, to compare runs bit for bit), the number of calls
 * and the number of active arithmetic operations outside libm (one add per
 * sin, one subtract per exp), to tell the tape blocks of the libm calls from
 * the loop's own. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/derivgrind.h>

int main(int argc, char **argv)
{
    long calls = argc > 1 ? atol(argv[1]) : 1000000;
    double x = argc > 2 ? atof(argv[2]) : 0.7;
    if (calls < 1 || !(x > 0)) {
        fputs("libm_loop: CALLS must be positive, X > 0\n", stderr);
        return 2;
    }
    DG_INPUTF(x);
    double s = x;
    long loop_ops = 0;
    for (long k = 0; k < calls; k++) {
        switch (k % 3) {
        case 0:
            s = sin(s + 1e-5 * (double)k);
            loop_ops++;
            break;
        case 1:
            s = exp(x - s);
            loop_ops++;
            break;
        default:
            s = pow(s, x);
            break;
        }
    }
    DG_OUTPUTF(s);
    printf("result %.17g\nlibm calls %ld\nloop operations %ld\n", s, calls, loop_ops);
    return 0;
}
