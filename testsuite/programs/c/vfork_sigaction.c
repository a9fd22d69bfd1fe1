/* A child that shares the parent's memory but not its signal handlers
 * (vfork, posix_spawn's clone, clone(CLONE_VM) without CLONE_SIGHAND) has
 * dispositions of its own: what it sets must not change the parent's.
 * glibc's posix_spawn child resets every handled signal to SIG_DFL, and so
 * does CPython's subprocess; under an older dgad that reset reached the
 * parent, which then died of the next signal it meant to handle. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static volatile sig_atomic_t parent_got, child_got;

static void parent_handler(int sig)
{
    parent_got = sig;
}

static void child_handler(int sig)
{
    child_got = sig;
}

static void check(const char *after)
{
    struct sigaction old;
    sigaction(SIGINT, NULL, &old);
    printf("%s: SIGINT handler ours %d", after, old.sa_handler == parent_handler);
    sigaction(SIGPIPE, NULL, &old);
    printf(", SIGPIPE ignored %d", old.sa_handler == SIG_IGN);
    sigaction(SIGUSR1, NULL, &old);
    printf(", SIGUSR1 ignored %d", old.sa_handler == SIG_IGN);
    parent_got = 0;
    raise(SIGINT);
    raise(SIGUSR1);
    printf(", SIGINT handled %d\n", parent_got == SIGINT);
}

/* A clone(CLONE_VM) child: handles SIGUSR1 itself, which its parent
 * ignores, and resets SIGINT. */
static int clone_child(void *arg)
{
    (void)arg;
    signal(SIGUSR1, child_handler);
    signal(SIGINT, SIG_DFL);
    raise(SIGUSR1);
    return child_got == SIGUSR1 ? 7 : 1;
}

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = parent_handler;
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGUSR1, SIG_IGN);
    fflush(stdout);

    pid_t pid = vfork();
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGUSR1, child_handler);
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    check("after vfork");

    char *argv[] = {"/bin/true", NULL};
    posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ);
    waitpid(pid, &status, 0);
    check("after posix_spawn");

    posix_spawnattr_t attr;
    sigset_t all;
    sigfillset(&all);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
    posix_spawn(&pid, "/bin/true", NULL, &attr, argv, environ);
    waitpid(pid, &status, 0);
    check("after posix_spawn with SETSIGDEF");

    size_t size = 256 * 1024;
    char *stack = malloc(size);
    pid = clone(clone_child, stack + size, CLONE_VM | SIGCHLD, NULL);
    waitpid(pid, &status, 0);
    printf("clone child handled its own SIGUSR1: %d\n", WIFEXITED(status) && WEXITSTATUS(status) == 7);
    check("after clone(CLONE_VM)");
    printf("END vfork_sigaction\n");
    return 0;
}
