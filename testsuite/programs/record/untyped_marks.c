/* Inputs marked the way Derivgrind's Fortran interface marks them:
 * dg_inputf(c_loc(x)) knows no type, so its request carries the value 0
 * (dgad_fortran_shim.c). A float input beside another float, and a double
 * whose low word is zero (1.5), so that no reading of their bytes matches
 * that 0 by chance. In dot mode with a record directory, their tangents
 * from dg-input-dots cannot be set in the right format: said on stderr,
 * the tangents stay 0 (they used to be set in a type read off stack
 * bytes). Prints y = x^2 and z = 3d. With a second argument, the inputs
 * are marked with their values and w = d*x is marked as an output
 * without its value: its tangent cannot be read in the right format
 * either.
 * Usage: untyped_marks X [out] */
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/derivgrind.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    volatile float x[2] = {(float)atof(argv[1]), -2.25f};
    volatile double d = atof(argv[1]);
    if (argc > 2) {
        /* `out`: typed inputs, an output marked without its value. */
        DG_INPUTF(x[0]);
        DG_INPUTF(d);
        volatile double w = d * (double)x[0];
        (void)dgad_mark_output_(&w, 0.0, 1);
        printf("%g\n", w);
        return 0;
    }
    (void)dgad_mark_input_(&x[0], 0.0, 1);
    (void)dgad_mark_input_(&d, 0.0, 1);
    float y = x[0] * x[0];
    double z = d * 3.0;
    DG_OUTPUTF(y);
    DG_OUTPUTF(z);
    printf("%g %g\n", (double)y, z);
    return 0;
}
