/* A stack overflow in a program with a SIGSEGV handler but no alternate
 * stack: the kernel cannot push the handler's frame on the exhausted stack
 * and kills the process with SIGSEGV. Under dgad the runtime builds the
 * frame and must end the same way (it faulted itself and stopped with
 * "internal error", exit 125). The overflow runs in a child; the parent
 * reports how it ended. */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void handler(int sig)
{
    (void)sig;
    _exit(1); /* never reached: there is no stack to run it on */
}

static volatile int forever = 1;

static int depth(int n)
{
    volatile char buf[256];
    buf[n % 256] = (char)n;
    if (!forever)
        return 0;
    return depth(n + 1) + buf[(n + 1) % 256];
}

int main(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGSEGV, handler);
        return depth(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
        printf("child killed by signal %d\n", WTERMSIG(status));
    else
        printf("child exited with status %d\n", WEXITSTATUS(status));
    printf("END stack_overflow_no_altstack\n");
    return 0;
}
