/* Long `rep movs` and `rep stos` (128 KiB each, forwards and backwards)
 * carry derivatives, while a 100 µs timer interrupts them. Record mode
 * used to apply the shadow of the whole range before the instruction ran;
 * every alarm then came during that copy, one iteration ran, and the
 * instruction restarted with nearly all of it to shadow again: a livelock
 * (the program never finished). Now the runtime does such instructions a
 * chunk at a time and delivers the signal between chunks, at the
 * instruction, with its registers as far as it got (as the CPU does).
 *   a[i] = (i + 1) x;  b = a (rep movsq);  c = b (std; rep movsb);
 *   d[i] = x² (rep stosq of an active double); also an overlapping
 *   rep movsb (e = e shifted by 8 bytes), done the old way.
 *   out = b[N-1] + 2 c[1] + 3 d[N/2] + e[1]  =>  d out/dx = N + 4 + 6x + 1
 * Usage: rep_strings X */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <valgrind/derivgrind.h>

#define N 16384
#define ROUNDS 40

static double a[N], b[N], c[N], d[N], e[N + 1];
static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    double x = atof(argv[1]);
    DG_INPUTF(x);
    for (int i = 0; i < N; i++)
        a[i] = (i + 1) * x;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every = {{0, 100}, {0, 100}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &every, NULL);
    double sq = x * x;
    uint64_t bits;
    memcpy(&bits, &sq, sizeof bits);
    for (int r = 0; r < ROUNDS; r++) {
        void *s = a, *t = b;
        size_t n = N;
        __asm__ volatile("rep movsq" : "+S"(s), "+D"(t), "+c"(n) : : "memory");
        s = (char *)b + sizeof b - 1;
        t = (char *)c + sizeof c - 1;
        n = sizeof b;
        __asm__ volatile("std; rep movsb; cld" : "+S"(s), "+D"(t), "+c"(n) : : "memory");
        t = d;
        n = N;
        __asm__ volatile("rep stosq" : "+D"(t), "+c"(n) : "a"(bits) : "memory");
    }
    e[0] = x;
    for (int i = 1; i <= N; i++)
        e[i] = 0;
    {
        void *s = e, *t = e + 1;
        size_t n = N * sizeof(double);
        /* Forwards onto itself 8 bytes ahead: copies e[0] into every element. */
        __asm__ volatile("rep movsb" : "+S"(s), "+D"(t), "+c"(n) : : "memory");
    }
    setitimer(ITIMER_REAL, &off, NULL);
    double out = b[N - 1] + 2 * c[1] + 3 * d[N / 2] + e[1];
    DG_OUTPUTF(out);
    printf("out %.17g alarms %s\n", out, alarms > 0 ? "yes" : "no");
    return 0;
}
