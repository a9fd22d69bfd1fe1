/* Marks inputs and outputs in every form the header has: DG_INPUTF of a
 * float, a double and a long double, DG_INPUT of a double (its index
 * printed), DG_OUTPUTF of a double twice, of a float and of a long double,
 * DG_OUTPUT (its index printed), and dgad_input/dgad_output. Built once as
 * is (dgad's one-request marks) and once with DGAD_THREE_REQUEST_MARKS
 * (Derivgrind's three requests per mark), it must leave the same record
 * files and print the same.
 *
 *   y1 = xd·xf + xl,  y2 = xd·xd·xi,  yf = xf·xf,  yl = xl·xd,  yg = xg·y1
 *
 * with xf = 1.5f, xd = 2.5, xl = 0.75L, xi = 3.0, xg = 4.0. */
#include <dgad.h>
#include <stdio.h>
#include <valgrind/derivgrind.h>

int main(void)
{
    float xf = 1.5f;
    double xd = 2.5, xi = 3.0, xg = 4.0;
    long double xl = 0.75L;
    DG_INPUTF(xf);
    DG_INPUTF(xd);
    DG_INPUTF(xl);
    unsigned long long ii = DG_INPUT(xi);
    dgad_input(&xg);
    double y1 = xd * xf + (double)xl;
    double y2 = xd * xd * xi;
    float yf = xf * xf;
    long double yl = xl * xd;
    double yg = xg * y1;
    DG_OUTPUTF(y1);
    DG_OUTPUTF(y1);
    DG_OUTPUTF(yf);
    DG_OUTPUTF(yl);
    unsigned long long io = DG_OUTPUT(y2);
    dgad_output(&yg);
    /* Printed from passive copies. */
    double p[5] = {y1, y2, yg, (double)yf, (double)yl};
    unsigned long long passive = 0;
    for (int i = 0; i < 5; i++)
        DG_SET_INDEX(&p[i], &passive);
    printf("y1 %.17g y2 %.17g yg %.17g yf %.9g yl %.17g\n", p[0], p[1], p[2], p[3], p[4]);
    printf("DG_INPUT index %llu, DG_OUTPUT index %llu\n", ii, io);
    return 0;
}
