/* The parent records y_{k+1} = y_k * x + 0.5 (y_0 = 1) for N steps (enough
 * tape to start dgad's writer thread), then forks. The child computes the
 * same recurrence from the active x for N steps more, declares its result an
 * output and exits; the parent waits and declares y. Under dgad the forked
 * child does not record: the tape, the gradient and the single output line
 * are the parent's. Usage: fork_child X N */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <valgrind/derivgrind.h>

static double recurrence(double x, int n)
{
    double y = 1.0;
    for (int i = 0; i < n; i++)
        y = y * x + 0.5;
    return y;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    double x = atof(argv[1]);
    int n = atoi(argv[2]);
    DG_INPUTF(x);
    double y = recurrence(x, n);
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        double z = recurrence(x, n) + 1.0;
        DG_OUTPUTF(z);
        printf("child %.17g\n", z);
        return 0;
    }
    int status = 0;
    waitpid(child, &status, 0);
    DG_OUTPUTF(y);
    printf("parent %.17g, child exited with %d\n", y, WEXITSTATUS(status));
    return 0;
}
