/* Memory written by the kernel after it held active values must be passive:
 *  y1: read() of binary doubles {1, 2, 3, 4} from FILE into a buffer that
 *      held x*(i+1):  y1 = b0*b1 + b2*x,        dy1/dx = 3;
 *  y2: an mmap'd array of x*i, unmapped and mapped again (zero pages) at
 *      the same address: y2 = sum + 2x,        dy2/dx = 2;
 *  y3: an array of 3x moved by mremap to another address and grown (the
 *      shadow moves with the data): y3 = c[n-1] + c[0] + c[n],  dy3/dx = 6;
 *  y4: an array of x*i given back with madvise(MADV_DONTNEED), which reads
 *      back as zeros: y4 = sum + 4x,            dy4/dx = 4;
 *  y5..y8: as y1, with the doubles received by recvmmsg (a datagram),
 *      msgrcv (a System V message), mq_receive (a POSIX message) and
 *      process_vm_readv (from this process's own `data`): dy/dx = 3 each.
 * Usage: kernel_writes X FILE */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <valgrind/derivgrind.h>

#define BYTES (1 << 21)

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const double data[4] = {1.0, 2.0, 3.0, 4.0};
    int f = open(argv[2], O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (f < 0 || write(f, data, sizeof data) != sizeof data)
        return 1;
    close(f);
    double x = atof(argv[1]);
    DG_INPUTF(x);

    volatile double buf[4];
    for (int i = 0; i < 4; i++)
        buf[i] = x * (i + 1);
    f = open(argv[2], O_RDONLY);
    if (f < 0 || read(f, (void *)buf, sizeof data) != sizeof data)
        return 1;
    close(f);
    double y1 = buf[0] * buf[1] + buf[2] * x;

    int n = BYTES / sizeof(double);
    double *a = mmap(NULL, BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED)
        return 1;
    for (int i = 0; i < n; i++)
        a[i] = x * i;
    munmap(a, BYTES);
    double *b = mmap(a, BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (b != a)
        return 1;
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += b[i];
    double y2 = sum + 2.0 * x;

    for (int i = 0; i < n; i++)
        b[i] = 3.0 * x;
    char *target = mmap(NULL, 2 * BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(target, 2 * BYTES);
    double *c = mremap(b, BYTES, 2 * BYTES, MREMAP_MAYMOVE | MREMAP_FIXED, target);
    if (c == MAP_FAILED || (void *)c == (void *)b)
        return 1;
    double y3 = c[n - 1] + c[0] + c[n];

    for (int i = 0; i < n; i++)
        c[i] = x * i;
    madvise(c, BYTES, MADV_DONTNEED);
    sum = 0;
    for (int i = 0; i < n; i++)
        sum += c[i];
    double y4 = sum + 4.0 * x;

    double y[4];
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < 4; i++)
            buf[i] = x * (i + 1);
        struct iovec iov = {(void *)buf, sizeof data};
        ssize_t got = -1;
        if (k == 0) {
            int sv[2];
            if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) != 0 || send(sv[0], data, sizeof data, 0) != sizeof data)
                return 1;
            struct mmsghdr mm;
            memset(&mm, 0, sizeof mm);
            mm.msg_hdr.msg_iov = &iov;
            mm.msg_hdr.msg_iovlen = 1;
            got = recvmmsg(sv[1], &mm, 1, 0, NULL) == 1 ? (ssize_t)mm.msg_len : -1;
        } else if (k == 1) {
            /* The message lands on a struct whose text held active values. */
            static struct {
                long type;
                double text[4];
            } m;
            m.type = 1;
            memcpy(m.text, data, sizeof data);
            int q = msgget(IPC_PRIVATE, 0600);
            if (q < 0 || msgsnd(q, &m, sizeof data, 0) != 0)
                return 1;
            for (int i = 0; i < 4; i++)
                m.text[i] = x * (i + 1);
            got = msgrcv(q, &m, sizeof data, 0, 0);
            msgctl(q, IPC_RMID, NULL);
            memcpy((void *)buf, m.text, sizeof data);
        } else if (k == 2) {
            char name[64];
            snprintf(name, sizeof name, "/dgad-kernel-writes-%d", (int)getpid());
            struct mq_attr attr = {.mq_maxmsg = 1, .mq_msgsize = sizeof data};
            mqd_t q = mq_open(name, O_CREAT | O_RDWR, 0600, &attr);
            if (q == (mqd_t)-1 || mq_send(q, (const char *)data, sizeof data, 0) != 0)
                return 1;
            unsigned prio;
            got = mq_receive(q, (char *)buf, sizeof data, &prio);
            mq_close(q);
            mq_unlink(name);
        } else {
            struct iovec remote = {(void *)data, sizeof data};
            got = process_vm_readv(getpid(), &iov, 1, &remote, 1, 0);
        }
        if (got != sizeof data)
            return 1;
        y[k] = buf[0] * buf[1] + buf[2] * x;
    }

    DG_OUTPUTF(y1);
    DG_OUTPUTF(y2);
    DG_OUTPUTF(y3);
    DG_OUTPUTF(y4);
    for (int k = 0; k < 4; k++)
        DG_OUTPUTF(y[k]);
    printf("%.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", y1, y2, y3, y4, y[0], y[1], y[2], y[3]);
    return 0;
}
