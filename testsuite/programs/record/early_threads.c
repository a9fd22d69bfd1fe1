/* Work done by threads and signal handlers that exist before dgad takes
 * over: a worker thread started by a library constructor (early_worker.c),
 * a SIGUSR1 handler installed there, and a SIGUSR2 handler installed from
 * the program's .preinit_array (which runs before every constructor).
 * Prints values; marks x_i as inputs and the results as outputs:
 *   y_i = x_i² sin x_i + 2 x_i          (on the worker thread)
 *   u   = 3 x_0² + e^{x_0}              (SIGUSR1 handler)
 *   v   = x_1 / (1 + x_1²)              (SIGUSR2 handler)
 * Usage: early_threads X0 X1 X2 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/derivgrind.h>

void early_worker_run(const double *in, double *out, int n);
extern volatile double early_handler_in;
extern volatile double early_handler_out;

static volatile double preinit_in, preinit_out;

static void on_usr2(int sig)
{
    (void)sig;
    double x = preinit_in;
    preinit_out = x / (1.0 + x * x);
}

static void install_usr2(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    sigaction(SIGUSR2, &sa, NULL);
}

__attribute__((section(".preinit_array"), used)) static void (*preinit)(void) = install_usr2;

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    double x[3], y[3];
    for (int i = 0; i < 3; i++) {
        x[i] = atof(argv[i + 1]);
        DG_INPUTF(x[i]);
    }
    early_worker_run(x, y, 3);
    early_handler_in = x[0];
    raise(SIGUSR1);
    double u = early_handler_out;
    preinit_in = x[1];
    raise(SIGUSR2);
    double v = preinit_out;
    for (int i = 0; i < 3; i++) {
        DG_OUTPUTF(y[i]);
        printf("y%d %.17g\n", i, y[i]);
    }
    DG_OUTPUTF(u);
    DG_OUTPUTF(v);
    printf("u %.17g\nv %.17g\n", u, v);
    return 0;
}
