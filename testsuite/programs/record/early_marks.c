/* AD inputs marked, and computed on, before any library constructor: the
 * program's .preinit_array marks x = 1.5 (which the constructor of
 * early_marks_lib.c turns into y = x sin x) and z = 2 (q = z³ here).
 * main marks y and q as outputs and prints them.
 * Expected Jacobian: dy/dx = sin x + x cos x, dq/dz = 3 z², zero elsewhere. */
#include <stdio.h>
#include <valgrind/derivgrind.h>

extern double early_x, early_y;
static volatile double z, q;

static void mark_early(void)
{
    early_x = 1.5;
    DG_INPUTF(early_x);
    double zz = 2.0;
    DG_INPUTF(zz);
    z = zz;
    q = zz * zz * zz;
}

__attribute__((section(".preinit_array"), used)) static void (*preinit)(void) = mark_early;

int main(void)
{
    double y = early_y, qq = q;
    DG_OUTPUTF(y);
    DG_OUTPUTF(qq);
    printf("y %.17g\nq %.17g\n", y, qq);
    return 0;
}
