/* fork + execve + waitpid: the children inherit LD_PRELOAD, so under dgad
 * they run instrumented too. Output is ordered by waiting for each child
 * before printing anything else. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void describe(const char *what, int status)
{
    if (WIFEXITED(status))
        printf("%s: exited with status %d\n", what, WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        printf("%s: killed by signal %d\n", what, WTERMSIG(status));
    else
        printf("%s: other status\n", what);
}

static pid_t spawn_echo(char *const argv[])
{
    /* Flush first, or the child would inherit and repeat buffered output. */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execve("/bin/echo", argv, environ);
        _exit(127);
    }
    return pid;
}

int main(void)
{
    int status;
    char *const hello[] = { "echo", "hello", "from", "the", "child", NULL };
    pid_t pid = spawn_echo(hello);
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (waitpid(pid, &status, 0) != pid) {
        perror("waitpid");
        return 1;
    }
    describe("echo", status);

    char *const bad[] = { "echo", "--no-such-option-is-fine-for-echo", NULL };
    pid = spawn_echo(bad);
    waitpid(pid, &status, 0);
    describe("echo with odd argument", status);

    fflush(stdout);
    pid = fork();
    if (pid == 0)
        _exit(5);
    waitpid(pid, &status, 0);
    describe("child calling _exit(5)", status);

    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        raise(SIGTERM);
        _exit(0);
    }
    waitpid(pid, &status, 0);
    describe("child raising SIGTERM", status);

    /* Several children at once, reaped in creation order. */
    pid_t kids[4];
    for (int i = 0; i < 4; i++) {
        fflush(stdout);
        kids[i] = fork();
        if (kids[i] == 0)
            _exit(10 + i);
    }
    for (int i = 0; i < 4; i++) {
        waitpid(kids[i], &status, 0);
        char what[32];
        snprintf(what, sizeof what, "child %d", i);
        describe(what, status);
    }
    printf("END fork_exec\n");
    return 0;
}
