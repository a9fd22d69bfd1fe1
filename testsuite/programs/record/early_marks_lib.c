/* A library whose constructor computes on a value the program marked as an
 * AD input in its .preinit_array (early_marks.c): both run before
 * libdgad.so's own constructor, so only a runtime that took over earlier
 * (the launcher's injection at the loader's rendezvous) sees them.
 *   early_y = early_x sin(early_x) */
#include <math.h>

double early_x;
double early_y;

__attribute__((constructor)) static void compute(void)
{
    early_y = early_x * sin(early_x);
}
