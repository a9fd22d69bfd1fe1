/* Structures the kernel fills must be passive afterwards, although active
 * values lay there before (issue 16, point 4). Each case stores x*k into a
 * buffer, lets one system call overwrite the bytes where the value's
 * index lies, reads them back as a double and outputs it: y0..y11 and
 * y13 must have derivative 0 (a stale index gives 2). y12 lies right
 * after a pipe2 result and keeps its derivative, 5: nothing more is
 * cleared. y13: the remaining time of a nanosleep a signal interrupts
 * (written although the call fails with EINTR).
 * Prints which cases ran (nothing that differs between runs).
 * Usage: kernel_struct_writes X [K]   (K: output y_K only) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <linux/random.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <valgrind/derivgrind.h>

#define CASES 14

typedef double __attribute__((aligned(1), may_alias)) unaligned_double;

static void fill(volatile double *d, int n, double x)
{
    for (int i = 0; i < n; i++)
        d[i] = x * (i + 2);
}

static void on_alarm(int sig)
{
    (void)sig;
}

static int fail(const char *what)
{
    perror(what);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    double x = atof(argv[1]);
    DG_INPUTF(x);
    double y[CASES];

    /* wait4: the status (an int) and the rusage. */
    union {
        int status;
        double d;
    } st;
    union {
        struct rusage ru;
        double d[sizeof(struct rusage) / sizeof(double)];
    } ru;
    fill(&st.d, 1, x);
    fill(ru.d, sizeof ru.d / sizeof ru.d[0], x);
    pid_t child = fork();
    if (child == 0)
        _exit(3);
    if (child < 0 || wait4(child, &st.status, 0, &ru.ru) != child)
        return fail("wait4");
    y[0] = st.d;
    y[1] = ru.d[0];

    /* pipe2: two descriptors; the double after them keeps its index. */
    struct {
        union {
            int fds[2];
            double d;
        } u;
        double after;
    } pp;
    fill(&pp.u.d, 1, x);
    pp.after = 5.0 * x;
    if (pipe2(pp.u.fds, O_CLOEXEC) != 0)
        return fail("pipe2");
    int rd = pp.u.fds[0], wr = pp.u.fds[1];
    y[2] = pp.u.d;
    y[12] = pp.after;

    /* gettimeofday (the system call: the vDSO's stores are the
     * program's own). */
    union {
        struct timeval tv;
        double d[2];
    } tv;
    fill(tv.d, 2, x);
    if (syscall(SYS_gettimeofday, &tv.tv, NULL) != 0)
        return fail("gettimeofday");
    y[3] = tv.d[0];

    /* poll: revents (bytes 6-7 of a pollfd) is all the kernel writes. A
     * double stored at byte 6 has its index in bytes 6-9; the second
     * pollfd's fd and events, stored over its other bytes afterwards,
     * leave bytes 6-7 of the index alone (volatile stores, in this order:
     * no store merged into a vector). */
    if (write(wr, "z", 1) != 1)
        return fail("write");
    union {
        struct pollfd p[2];
        unsigned char b[16];
    } pl;
    pl.p[0].fd = rd;
    pl.p[0].events = POLLIN;
    *(volatile unaligned_double *)(pl.b + 6) = 3.0 * x;
    *(volatile int *)(pl.b + 8) = rd;
    *(volatile short *)(pl.b + 12) = POLLIN;
    if (poll(pl.p, 2, 0) != 2)
        return fail("poll");
    y[4] = *(volatile unaligned_double *)(pl.b + 6);

    /* getsockname of an autobound abstract Unix socket (8 bytes). */
    int s = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un bind_to = {.sun_family = AF_UNIX};
    if (s < 0 || bind(s, (struct sockaddr *)&bind_to, sizeof(sa_family_t)) != 0)
        return fail("bind");
    union {
        struct sockaddr_un sa;
        double d[sizeof(struct sockaddr_un) / sizeof(double)];
    } sa;
    fill(sa.d, sizeof sa.d / sizeof sa.d[0], x);
    socklen_t len = sizeof sa.sa;
    if (getsockname(s, (struct sockaddr *)&sa.sa, &len) != 0 || len < 8)
        return fail("getsockname");
    y[5] = sa.d[0];

    /* ioctl FIONREAD (a classic request) on the pipe: an int. */
    union {
        int n;
        double d;
    } nr;
    fill(&nr.d, 1, x);
    if (ioctl(rd, FIONREAD, &nr.n) != 0)
        return fail("FIONREAD");
    y[6] = nr.d;

    /* ioctl RNDGETENTCNT (_IOR, size encoded) on /dev/urandom: an int. */
    int ur = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    union {
        int n;
        double d;
    } ent;
    fill(&ent.d, 1, x);
    if (ur < 0 || ioctl(ur, RNDGETENTCNT, &ent.n) != 0)
        return fail("RNDGETENTCNT");
    y[7] = ent.d;

    /* uname, sysinfo, clock_getres (the system call), times. */
    union {
        struct utsname u;
        double d[sizeof(struct utsname) / sizeof(double)];
    } un;
    fill(un.d, sizeof un.d / sizeof un.d[0], x);
    if (uname(&un.u) != 0)
        return fail("uname");
    y[8] = un.d[0];
    union {
        struct sysinfo s;
        double d[sizeof(struct sysinfo) / sizeof(double)];
    } si;
    fill(si.d, sizeof si.d / sizeof si.d[0], x);
    if (sysinfo(&si.s) != 0)
        return fail("sysinfo");
    y[9] = si.d[0];
    union {
        struct timespec t;
        double d[2];
    } res;
    fill(res.d, 2, x);
    if (syscall(SYS_clock_getres, CLOCK_MONOTONIC, &res.t) != 0)
        return fail("clock_getres");
    y[10] = res.d[0];
    union {
        struct tms t;
        double d[4];
    } tm;
    fill(tm.d, 4, x);
    if (times(&tm.t) == (clock_t)-1)
        return fail("times");
    y[11] = tm.d[0];

    /* nanosleep interrupted by SIGALRM (no SA_RESTART): the remaining
     * time. */
    struct sigaction sa_alarm;
    memset(&sa_alarm, 0, sizeof sa_alarm);
    sa_alarm.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa_alarm, NULL);
    union {
        struct timespec t;
        double d[2];
    } rem;
    fill(rem.d, 2, x);
    struct itimerval soon = {.it_value = {.tv_usec = 20000}};
    setitimer(ITIMER_REAL, &soon, NULL);
    struct timespec long_sleep = {.tv_sec = 20};
    if (nanosleep(&long_sleep, &rem.t) != -1 || errno != EINTR)
        return fail("nanosleep");
    y[13] = rem.d[0];

    for (int k = 0; k < CASES; k++)
        if (argc < 3 || k == atoi(argv[2]))
            DG_OUTPUTF(y[k]);
    printf("cases: %d\n", CASES);
    return 0;
}
