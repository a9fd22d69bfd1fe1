/* Declares x as input and y_N of y_{k+1} = y_k * x + 0.5 (y_0 = 1) as
 * output, records M more steps of that recurrence, and is killed with
 * SIGKILL, which no handler sees: the index files must hold both
 * declarations all the same. Usage: killed_after_declaring X N M */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <valgrind/derivgrind.h>

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    double x = atof(argv[1]), y = 1.0;
    int n = atoi(argv[2]), m = atoi(argv[3]);
    DG_INPUTF(x);
    for (int i = 0; i < n; i++)
        y = y * x + 0.5;
    DG_OUTPUTF(y);
    printf("%.17g\n", y);
    fflush(stdout);
    for (int i = 0; i < m; i++)
        y = y * x + 0.5;
    printf("%.17g\n", y);
    fflush(stdout);
    kill(getpid(), SIGKILL);
    return 0;
}
