/* Writers record mode cannot follow must be reported once on stderr
 * (issue 16, point 4): writable shared mappings (anonymous, POSIX and
 * System V shared memory; a read-only shared file mapping first, which
 * is no such writer), io_uring and asynchronous I/O contexts, each set up
 * twice. stdout says what ran (the same natively); stderr names the first
 * writable shared mapping's address, for the report to be checked
 * against. Usage: shared_writers DIR */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

/* struct io_uring_params, which the kernel fills (120 bytes). */
struct uring_params {
    unsigned sq_entries, cq_entries, flags, sq_thread_cpu, sq_thread_idle;
    unsigned features, wq_fd, resv[3];
    unsigned long long sq_off[5], cq_off[5];
};

static void setup_twice(const char *name, long (*setup)(void))
{
    int ok = 0, err = 0;
    for (int k = 0; k < 2; k++) {
        long r = setup();
        if (r < 0)
            err = errno;
        else
            ok++;
    }
    if (ok == 2)
        printf("%s: ok\n", name);
    else
        printf("%s: unavailable (%s)\n", name, strerrorname_np(err));
}

static long uring(void)
{
    struct uring_params p;
    memset(&p, 0, sizeof p);
    long fd = syscall(SYS_io_uring_setup, 4, &p);
    if (fd >= 0)
        close((int)fd);
    return fd;
}

static long aio(void)
{
    aio_context_t ctx = 0;
    long r = syscall(SYS_io_setup, 4, &ctx);
    if (r == 0)
        syscall(SYS_io_destroy, ctx);
    return r;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char path[4096];
    snprintf(path, sizeof path, "%s/shared.bin", argv[1]);
    int f = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
    if (f < 0 || ftruncate(f, 4096) != 0)
        return 1;
    /* Read-only and shared: nobody writes it through this process. */
    volatile double *ro = mmap(NULL, 4096, PROT_READ, MAP_SHARED, f, 0);
    if (ro == MAP_FAILED)
        return 1;
    printf("read-only shared file: %g\n", ro[0]);

    double *anon[2];
    for (int k = 0; k < 2; k++) {
        anon[k] = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (anon[k] == MAP_FAILED)
            return 1;
        anon[k][0] = k + 0.5;
    }
    fprintf(stderr, "first writable shared mapping: %p\n", (void *)anon[0]);
    printf("anonymous shared: %g %g\n", anon[0][0], anon[1][0]);

    double *file = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
    if (file == MAP_FAILED)
        return 1;
    file[0] = 2.5;
    printf("shared file: %g %g\n", file[0], ro[0]);

    int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    if (id >= 0) {
        double *seg = shmat(id, NULL, 0);
        shmctl(id, IPC_RMID, NULL);
        if (seg != (void *)-1) {
            seg[0] = 3.5;
            printf("System V shared memory: %g\n", seg[0]);
            shmdt(seg);
        }
    } else {
        printf("System V shared memory: unavailable\n");
    }

    setup_twice("io_uring", uring);
    setup_twice("aio", aio);
    return 0;
}
