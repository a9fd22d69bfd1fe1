/* Declares x as input and then its index as an output N times
 * (DG_INDEX_TO_FILE, which adds no tape block): N lines of the output
 * index file beside a two-block tape. Usage: repeated_outputs X N */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/derivgrind.h>

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    double x = atof(argv[1]);
    int n = atoi(argv[2]);
    DG_INPUTF(x);
    uint64_t index = 1;
    for (int i = 0; i < n; i++)
        DG_INDEX_TO_FILE(DG_INDEXFILE_OUTPUT, &index);
    printf("%.17g\n", x);
    return 0;
}
