/* Records y_{k+1} = y_k * x + 0.5 (y_0 = 1) for N steps, closes every
 * descriptor above stderr (close() on 3..1023, then close_range(3, ~0U)),
 * opens a file of its own, writes and reads it back, records N steps more
 * and declares y. dgad's record files must survive that, and the program's
 * file must hold only what the program wrote. Usage: close_all_fds X N FILE */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <valgrind/derivgrind.h>

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    double x = atof(argv[1]), y = 1.0;
    int n = atoi(argv[2]);
    DG_INPUTF(x);
    for (int i = 0; i < n; i++)
        y = y * x + 0.5;
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    if (close_range(3, ~0U, 0) != 0)
        return 1;
    int f = open(argv[3], O_CREAT | O_TRUNC | O_RDWR, 0644);
    const char message[] = "the program's own file\n";
    char back[64] = {0};
    if (f < 0 || write(f, message, strlen(message)) != (ssize_t)strlen(message) ||
        pread(f, back, sizeof back - 1, 0) != (ssize_t)strlen(message))
        return 1;
    close(f);
    printf("file descriptor %d holds: %s", f, back);
    for (int i = 0; i < n; i++)
        y = y * x + 0.5;
    DG_OUTPUTF(y);
    printf("%.17g\n", y);
    return 0;
}
