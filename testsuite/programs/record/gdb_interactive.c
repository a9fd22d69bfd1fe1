/* Derivgrind's interactive use: the program marks nothing itself; gdb,
 * attached with `target remote | vgdb`, stops at the two marked lines and
 * seeds and reads derivatives with monitor commands. c = a*b + sin(a);
 * the loop is for a breakpoint hit on every iteration. */
#include <math.h>
#include <stdio.h>

int main(void)
{
    double a = 1.0, b = 2.0;
    __asm__ volatile("nop"); /* gdb: before */
    double c = a * b + sin(a);
    __asm__ volatile("nop"); /* gdb: after */
    double s = 0.0;
    for (int i = 0; i < 3; i++)
        s += c * i; /* gdb: loop */
    printf("%.17g %.17g\n", c, s);
    return 0;
}
