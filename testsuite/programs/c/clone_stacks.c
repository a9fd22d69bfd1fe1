/* clone and clone3 without CLONE_VM (a new process, as fork) but with a
 * stack of its own for the child, as glibc's clone() wrapper, sandboxes
 * and container tools make them: the child runs its function on that
 * stack. An older dgad made the call with the guest's stack, so the child
 * came back into the runtime on it and crashed (SIGSEGV). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char stack[1 << 16] __attribute__((aligned(16)));

static int child(void *arg)
{
    char here;
    /* On the stack it was given, in its own copy of memory. */
    int on_it = &here > stack && &here < stack + sizeof stack;
    *(char *)arg = 'C';
    return on_it ? 7 : 8;
}

static void report(const char *what, pid_t pid)
{
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        printf("%s: %s\n", what, strerror(errno));
        return;
    }
    if (WIFEXITED(status))
        printf("%s: exit status %d\n", what, WEXITSTATUS(status));
    else
        printf("%s: killed by signal %d\n", what, WTERMSIG(status));
}

/* clone3 with a stack; the child exits 9 at once (no libc on its stack). */
static long clone3_exits_9(struct clone_args *args)
{
    long r;
    __asm__ volatile("syscall\n"
                     "test %%rax, %%rax\n"
                     "jnz 1f\n"
                     "mov $9, %%edi\n"
                     "mov $60, %%eax\n"
                     "syscall\n"
                     "1:"
                     : "=a"(r)
                     : "0"((long)SYS_clone3), "D"(args), "S"(sizeof *args)
                     : "rcx", "r11", "memory");
    return r;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    char mark = 'P';
    report("clone with a stack", clone(child, stack + sizeof stack, SIGCHLD, &mark));
    printf("the parent's copy is untouched: %c\n", mark);
    struct clone_args args;
    memset(&args, 0, sizeof args);
    args.exit_signal = SIGCHLD;
    args.stack = (uint64_t)(uintptr_t)stack;
    args.stack_size = sizeof stack;
    report("clone3 with a stack", (pid_t)clone3_exits_9(&args));
    args.stack = 0;
    args.stack_size = 0;
    report("clone3 without", (pid_t)clone3_exits_9(&args));
    printf("END clone_stacks\n");
    return 0;
}
