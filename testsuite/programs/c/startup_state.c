/* What libc's own initialiser sets up before main, printed: the program's
 * name (program_invocation_name, from __init_misc), its arguments, that
 * environ is main's envp, and a variable from it. Under the launcher's
 * early injection libc's initialiser runs from the code cache; a runtime
 * that ran it early itself (dlopen of libm before the loader's
 * initialisers) left environ null and the name empty. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

extern char **environ;

int main(int argc, char **argv, char **envp)
{
    const char *probe = getenv("STARTUP_STATE_PROBE");
    printf("name %s\n", program_invocation_short_name);
    for (int i = 1; i < argc; i++)
        printf("arg %d %s\n", i, argv[i]);
    printf("environ is envp: %s\n", environ == envp && environ != NULL ? "yes" : "no");
    printf("probe %s\n", probe ? probe : "(unset)");
    return 0;
}
