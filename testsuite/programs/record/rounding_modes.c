/* The rounding trick n = (x·k + S) − S (S = 1.5·2^52) under each rounding
 * mode, as vectorised exp kernels round x/ln2 (numpy's AVX-512 exp adds its
 * shifter with round-toward-zero). n is a staircase in x: dn/dx = 0; and
 * r = x − n/k has dr/dx = 1. Prints "mode dn dr" per mode and point, the
 * tangents read with DG_GET_DOTVALUE (0 natively). */
#include <fenv.h>
#include <stdio.h>
#include <valgrind/derivgrind.h>

int main(void)
{
    const int modes[4] = {FE_TONEAREST, FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO};
    volatile double shifter = 6755399441055744.0, k = 1.4426950408889634;
    for (int m = 0; m < 4; m++) {
        for (int i = 0; i < 16; i++) {
            double x = 0.1 + 0.37 * i, one = 1.0;
            DG_SET_DOTVALUE(&x, &one, sizeof x);
            fesetround(modes[m]);
            volatile double s = x * k + shifter;
            double n = s - shifter;
            fesetround(FE_TONEAREST);
            double r = x - n / k;
            double dn = 0, dr = 0;
            DG_GET_DOTVALUE(&n, &dn, sizeof n);
            DG_GET_DOTVALUE(&r, &dr, sizeof r);
            printf("%d %g %g\n", m, dn, dr);
        }
    }
    return 0;
}
