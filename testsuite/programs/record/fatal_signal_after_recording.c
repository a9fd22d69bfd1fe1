/* Records y_{k+1} = y_k * x + 0.5 (y_0 = 1) for N steps, prints y, and with
 * a second argument then dies of SIGSEGV without a handler. The tape must be
 * complete all the same. With "reset" instead of "crash", the program first
 * installs a SIGSEGV handler and resets it to SIG_DFL (the runtime must keep
 * its own handler through that). Usage: fatal_signal_after_recording X N
 * [crash|reset] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/derivgrind.h>

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    double x = atof(argv[1]), y = 1.0;
    int n = atoi(argv[2]);
    DG_INPUTF(x);
    for (int i = 0; i < n; i++)
        y = y * x + 0.5;
    DG_OUTPUTF(y);
    printf("%.17g\n", y);
    fflush(stdout);
    if (argc > 3) {
        if (argv[3][0] == 'r') {
            signal(SIGSEGV, SIG_IGN);
            signal(SIGSEGV, SIG_DFL);
        }
        volatile int *p = 0;
        *p = 1;
    }
    return 0;
}
