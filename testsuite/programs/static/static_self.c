/* A statically linked program that looks at itself through /proc/self/exe
 * (decision 45): under dgad the kernel's answer would be the host, so the
 * runtime answers readlink, open and execve of that path with the
 * program's own file, and open of /proc/self/auxv with the program's own
 * vector. It prints its file's name and ELF magic, whether
 * /proc/self/auxv agrees with getauxval, and re-executes itself once
 * through /proc/self/exe. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    path[n > 0 ? n : 0] = 0;
    const char *base = strrchr(path, '/');
    char magic[4] = {0};
    int fd = open("/proc/self/exe", O_RDONLY);
    if (fd >= 0) {
        if (read(fd, magic, 4) != 4)
            magic[1] = 0;
        close(fd);
    }
    /* /proc/self/auxv against getauxval (the vector on the stack). */
    unsigned long pair[2], found = 0, agree = 0;
    fd = open("/proc/self/auxv", O_RDONLY);
    while (fd >= 0 && read(fd, pair, sizeof pair) == sizeof pair && pair[0] != AT_NULL) {
        if (pair[0] == AT_ENTRY || pair[0] == AT_PHDR || pair[0] == AT_PHNUM) {
            found++;
            agree += pair[1] == getauxval(pair[0]);
        }
    }
    if (fd >= 0)
        close(fd);
    printf("generation %s: %s, magic %.3s, auxv %lu of %lu agree\n", argc > 1 ? argv[1] : "0",
           base ? base + 1 : path, magic + 1, agree, found);
    fflush(stdout);
    if (argc == 1) {
        char *again[] = {argv[0], "1", 0};
        execv("/proc/self/exe", again);
        perror("execv");
        return 1;
    }
    return 0;
}
