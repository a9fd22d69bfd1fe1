/* The address-space limit (RLIMIT_AS) is emulated under dgad (its own
 * reservations would exceed a limit applied at once; docs/limitations.md).
 * The emulation must answer as the kernel does: a limit set is read back,
 * a soft limit above the hard one is EINVAL, and a bad pointer is EFAULT
 * (through setrlimit, getrlimit and prlimit64), not a crash. */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static int result(long r)
{
    return r == 0 ? 0 : errno;
}

int main(void)
{
    struct rlimit start, lim, back;
    getrlimit(RLIMIT_AS, &start);
    /* An unmapped page and a read-only one. */
    char *page = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(page, 4096);
    void *unmapped = page, *read_only = page + 4096;

    printf("getrlimit unmapped: %d\n", result(syscall(SYS_getrlimit, RLIMIT_AS, unmapped)));
    printf("getrlimit read-only: %d\n", result(syscall(SYS_getrlimit, RLIMIT_AS, read_only)));
    printf("setrlimit unmapped: %d\n", result(syscall(SYS_setrlimit, RLIMIT_AS, unmapped)));
    printf("prlimit64 new unmapped: %d\n",
           result(syscall(SYS_prlimit64, 0, RLIMIT_AS, unmapped, &back)));

    lim.rlim_cur = 2;
    lim.rlim_max = 1;
    printf("soft above hard: %d\n", result(setrlimit(RLIMIT_AS, &lim)));

    /* A limit far above what the program uses: set, then read back. */
    lim.rlim_cur = 1UL << 44;
    lim.rlim_max = start.rlim_max;
    printf("set: %d\n", result(setrlimit(RLIMIT_AS, &lim)));
    getrlimit(RLIMIT_AS, &back);
    printf("read back: %d\n", back.rlim_cur == lim.rlim_cur && back.rlim_max == lim.rlim_max);

    /* A new limit with an unwritable old one: EFAULT, the new one set. */
    lim.rlim_cur = 1UL << 45;
    printf("prlimit64 old read-only: %d\n",
           result(syscall(SYS_prlimit64, 0, RLIMIT_AS, &lim, read_only)));
    getrlimit(RLIMIT_AS, &back);
    printf("set anyway: %d\n", back.rlim_cur == lim.rlim_cur);
    printf("END rlimit_as\n");
    return 0;
}
