/* Records y = x * x * x, prints it, and with a second argument then execs
 * itself with x + 1 (and no second argument): a later program image of the
 * same process that records as well. Usage: exec_after_recording X [again] */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <valgrind/derivgrind.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    double x = atof(argv[1]);
    DG_INPUTF(x);
    double y = x * x * x;
    DG_OUTPUTF(y);
    printf("%.17g\n", y);
    fflush(stdout);
    if (argc > 2) {
        char next[32];
        snprintf(next, sizeof next, "%.17g", atof(argv[1]) + 1.0);
        execl("/proc/self/exe", argv[0], next, (char *)0);
        perror("execl");
        return 1;
    }
    return 0;
}
