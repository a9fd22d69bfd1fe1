/* Built with -static and -static-pie by the transparency suite and run by
 * bash under dgad: LD_PRELOAD cannot reach a statically linked program, so
 * the runtime execs it inside dgad-static-host (same output and status). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 5;
    double sum = 0;
    for (int i = 1; i <= n; i++)
        sum += 1.0 / i;
    printf("static child: harmonic(%d) = %.12f\n", n, sum);
    return 3;
}
