/* A thread overflows its stack; its SIGSEGV handler runs on an alternate
 * stack of 8 KiB (SIGSTKSZ-sized, as Rust's runtime makes them) with an
 * inaccessible page below, and leaves with siglongjmp. Natively the
 * kernel's frame fits there; under dgad the runtime builds the frame and
 * it must fit too (it copied an 8 KiB extended-state buffer and faulted
 * in the guard page). */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define ALT_BYTES 8192

static sigjmp_buf env;
static volatile int keep_going = 1;

static void handler(int sig)
{
    (void)sig;
    siglongjmp(env, 1);
}

static int depth(int n)
{
    volatile char buf[256];
    buf[n % 256] = (char)n;
    if (!keep_going)
        return 0;
    return depth(n + 1) + buf[n % 256];
}

static void *run(void *arg)
{
    (void)arg;
    long page = sysconf(_SC_PAGESIZE);
    char *area = mmap(NULL, page + ALT_BYTES, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED || mprotect(area, page, PROT_NONE) != 0)
        return "no memory";
    stack_t ss = {.ss_sp = area + page, .ss_size = ALT_BYTES, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0)
        return "sigaltstack failed";
    if (sigsetjmp(env, 1) == 0) {
        depth(0);
        return "the recursion ended";
    }
    return "overflow caught on an 8 KiB alternate stack";
}

int main(void)
{
    struct sigaction sa = {.sa_handler = handler, .sa_flags = SA_ONSTACK};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 << 10);
    pthread_t t;
    void *result;
    pthread_create(&t, &attr, run, NULL);
    pthread_join(t, &result);
    printf("%s\n", (const char *)result);
    printf("END stack_overflow_altstack\n");
    return 0;
}
