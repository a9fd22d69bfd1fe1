/* A signal handler starts with the floating-point state the kernel gives
 * it (round to nearest, registers cleared), not with the interrupted
 * code's: the program rounds upward when it raises the signal, the handler
 * divides 1 by 3 and reports its rounding mode. */
#define _GNU_SOURCE
#include <fenv.h>
#include <signal.h>
#include <stdio.h>

static volatile double one = 1.0, three = 3.0;
static double quotient;
static int mode;

static void handler(int sig)
{
    (void)sig;
    mode = fegetround();
    quotient = one / three;
}

int main(void)
{
    signal(SIGUSR1, handler);
    fesetround(FE_UPWARD);
    raise(SIGUSR1);
    double after = one / three;
    fesetround(FE_TONEAREST);
    printf("handler rounds %s; 1/3 in the handler %.17g, after it (upward) %.17g\n",
           mode == FE_TONEAREST ? "to nearest" : "otherwise", quotient, after);
    printf("END handler_fpu_state\n");
    return 0;
}
