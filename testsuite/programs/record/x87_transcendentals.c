/* x87 remainder and transcendental instructions on active values (fmod
 * inlined as an fprem loop under -ffast-math, numpy's np.mod, SciPy's
 * special functions, glibc's long double complex functions): each has its
 * derivative rule. Before, their results were reported constants.
 * Inputs u = 1.5, v = -2.25. Prints the values and the Jacobian
 * (`expect OUTPUT INPUT d`) for testsuite/tests/record_vector_rules.rs. */
#include <math.h>
#include <stdio.h>
#include <valgrind/derivgrind.h>

/* st(0) = st0, st(1) = st1, the instruction, the result stored; the x87
 * stack is left empty. */
#define TWO(insn, pops)                                                      \
    __asm__ volatile("fldt %1\n\tfldt %2\n\t" insn "\n\tfstpt %0" pops       \
                     : "=m"(r)                                               \
                     : "m"(st1), "m"(st0)                                    \
                     : "ax", "st", "st(1)")

static long double two_op(long double st0, long double st1, int which)
{
    long double r;
    switch (which) {
    case 0: /* fprem until complete, as gcc inlines fmodl */
        TWO("1: fprem\n\tfnstsw %%ax\n\ttestb $4, %%ah\n\tjnz 1b", "\n\tfstp %%st(0)");
        break;
    case 1:
        TWO("1: fprem1\n\tfnstsw %%ax\n\ttestb $4, %%ah\n\tjnz 1b", "\n\tfstp %%st(0)");
        break;
    case 2:
        TWO("fscale", "\n\tfstp %%st(0)");
        break;
    case 3:
        TWO("fyl2x", "");
        break;
    case 4:
        TWO("fyl2xp1", "");
        break;
    default:
        TWO("fpatan", "");
        break;
    }
    return r;
}

static long double one_op(long double x, int which)
{
    long double r;
    if (which == 0)
        __asm__ volatile("fldt %1\n\tfsin\n\tfstpt %0" : "=m"(r) : "m"(x) : "st");
    else if (which == 1)
        __asm__ volatile("fldt %1\n\tfcos\n\tfstpt %0" : "=m"(r) : "m"(x) : "st");
    else
        __asm__ volatile("fldt %1\n\tf2xm1\n\tfstpt %0" : "=m"(r) : "m"(x) : "st");
    return r;
}

int main(void)
{
    double u = 1.5, v = -2.25;
    DG_INPUTF(u);
    DG_INPUTF(v);
    long double U = u, V = v;
    double y[9];
    y[0] = (double)two_op(5 * U, V, 0);         /* fmod(5u, v) */
    y[1] = (double)two_op(5 * U, V, 1);         /* remainder(5u, v) */
    y[2] = (double)two_op(U, V, 2);             /* u * 2^trunc(v) */
    y[3] = (double)two_op(U, V, 3);             /* v log2 u */
    y[4] = (double)two_op(U / 10, V, 4);        /* v log2(1 + u/10) */
    y[5] = (double)two_op(U, V, 5);             /* atan2(v, u) */
    y[6] = (double)one_op(U, 0);                /* sin u */
    y[7] = (double)one_op(U, 1);                /* cos u */
    y[8] = (double)one_op(U / 2, 2);            /* 2^(u/2) - 1 */
    for (int i = 0; i < 9; i++) {
        DG_OUTPUTF(y[i]);
        printf("y%d %.17g\n", i, y[i]);
    }
    double q0 = trunc(5 * u / v), q1 = nearbyint(5 * u / v);
    double d = u * u + v * v;
    printf("expect 0 0 5\nexpect 0 1 %.17g\n", -q0);
    printf("expect 1 0 5\nexpect 1 1 %.17g\n", -q1);
    printf("expect 2 0 %.17g\n", ldexp(1.0, (int)trunc(v)));
    printf("expect 3 0 %.17g\nexpect 3 1 %.17g\n", v / (u * M_LN2), log2(u));
    printf("expect 4 0 %.17g\nexpect 4 1 %.17g\n", v / 10 / ((1 + u / 10) * M_LN2), log2(1 + u / 10));
    printf("expect 5 0 %.17g\nexpect 5 1 %.17g\n", -v / d, u / d);
    printf("expect 6 0 %.17g\n", cos(u));
    printf("expect 7 0 %.17g\n", -sin(u));
    printf("expect 8 0 %.17g\n", 0.5 * exp2(u / 2) * M_LN2);
    printf("END x87_transcendentals\n");
    return 0;
}
