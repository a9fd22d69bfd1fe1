/* Changes to the root directory before declaring anything, then records
 * y = x^3 and declares it: a relative DGAD_RECORD still means the
 * directory the process started in. Usage: chdir_before_recording X */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <valgrind/derivgrind.h>

int main(int argc, char **argv)
{
    if (argc < 2 || chdir("/") != 0)
        return 2;
    double x = atof(argv[1]);
    DG_INPUTF(x);
    double y = x * x * x;
    DG_OUTPUTF(y);
    printf("%.17g\n", y);
    return 0;
}
