/* Kernels for dot mode's tangent cache (decision 46): legacy SSE
 * arithmetic and moves whose tangents the cache keeps in xmm16-xmm28,
 * with the cases its code must get exactly as the shadow register file
 * does: register and memory operands, scalar and packed, double and
 * float, zero and -0 tangents against infinities, exactly one passive
 * operand (a rounding shifter's size among them), registers beyond the
 * cached ones (xmm13-xmm15, by inline assembly), and a fault in the
 * middle of a block whose handler lets the load run again (a timer's
 * signals: `timer_loop.c`), and registers held as temporaries across
 * instructions seen by a fault's handler (decision 54).
 *
 * Built without -mavx (legacy SSE encodings). Prints each kernel's value
 * on stdout and "dot NAME TANGENT" on stderr (%a: every bit).
 * Usage: tangent_cache X */
#include <emmintrin.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <valgrind/derivgrind.h>

static void out(const char *name, double v)
{
    double d = 0.0;
    DG_GET_DOTVALUE(&v, &d, sizeof d);
    printf("%s %.17g\n", name, v);
    fprintf(stderr, "dot %s %a\n", name, d);
}

static void outf(const char *name, float v)
{
    float d = 0.0f;
    DG_GET_DOTVALUE(&v, &d, sizeof d);
    printf("%s %.9g\n", name, (double)v);
    fprintf(stderr, "dot %s %a\n", name, (double)d);
}

static volatile double vmem[8];
static volatile float fmem[8];

/* Scalar doubles: a chain of add, sub, mul, div with register and memory
 * operands, analytic derivative checked by the test. */
static __attribute__((noinline)) double scalar_chain(double x)
{
    vmem[0] = x;
    vmem[1] = 3.0;
    double a = x * x;         /* mulsd reg */
    double b = a - vmem[1] * x; /* x^2 - 3x */
    double c = b / (x + 1.0); /* divsd, addsd with a constant */
    double d = c * vmem[0];   /* mulsd mem */
    return d + vmem[0] / 4.0; /* divsd, addsd */
}

/* Packed doubles through intrinsics: movupd loads, packed arithmetic,
 * stores and a register copy. */
static __attribute__((noinline)) double packed(double x)
{
    double in[2] = {x, 2.0 * x}, res[2];
    __m128d v = _mm_loadu_pd(in);
    __m128d w = _mm_mul_pd(v, v);                 /* x^2, 4x^2 */
    __m128d u = _mm_add_pd(w, _mm_set_pd(1.0, 0.5));
    __m128d q = _mm_div_pd(u, _mm_add_pd(v, _mm_set1_pd(2.0)));
    __m128d r = _mm_sub_pd(q, v);
    _mm_storeu_pd(res, r);
    return res[0] + 3.0 * res[1];
}

/* Floats, scalar and packed. */
static __attribute__((noinline)) float floats(float x)
{
    fmem[0] = x;
    fmem[1] = 0.25f;
    float a = x * x - fmem[1] * x;
    float b = a / (x + 2.0f);
    __m128 v = _mm_set_ps(x, 2.0f * x, b, 1.0f);
    __m128 w = _mm_div_ps(_mm_mul_ps(v, v), _mm_add_ps(v, _mm_set1_ps(3.0f)));
    float lanes[4];
    _mm_storeu_ps(lanes, _mm_sub_ps(w, v));
    return b + lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

/* Square roots, minima and maxima, scalar and packed: d/dx of
 * sqrt(x² + 1) + min(x, 2) + max(x², 3x) + sqrt(4x) + min(x, x²)
 * (packed lanes: min(x, 2x) = x, max(x, 2x) = 2x for x > 0). */
static __attribute__((noinline)) double roots_and_bounds(double x)
{
    __m128d v = _mm_set_sd(x);
    __m128d s = _mm_sqrt_sd(v, _mm_add_sd(_mm_mul_sd(v, v), _mm_set_sd(1.0)));
    __m128d lo = _mm_min_sd(v, _mm_set_sd(2.0));
    __m128d hi = _mm_max_sd(_mm_mul_sd(v, v), _mm_mul_sd(v, _mm_set_sd(3.0)));
    __m128d p = _mm_set_pd(2.0 * x, x);
    __m128d q = _mm_set_pd(x, 2.0 * x);
    __m128d r = _mm_add_pd(_mm_min_pd(p, q), _mm_max_pd(p, q)); /* 3x, 3x */
    __m128d t = _mm_sqrt_pd(_mm_mul_pd(r, _mm_set1_pd(4.0 / 3.0))); /* sqrt(4x) */
    double lanes[2];
    _mm_storeu_pd(lanes, t);
    return _mm_cvtsd_f64(s) + _mm_cvtsd_f64(lo) + _mm_cvtsd_f64(hi) + lanes[0]
        + _mm_cvtsd_f64(_mm_min_sd(_mm_set_sd(lanes[1] * 0.0 + x), _mm_mul_sd(v, v)));
}

/* Zero tangents and infinities: a term whose tangent is ±0 is left out
 * rather than multiplied, so ∞·0 makes no NaN tangent. */
static __attribute__((noinline)) double infinities(double x, volatile double *inf)
{
    double z = x - x;       /* active, tangent 0 */
    double m = x * -0.0;    /* tangent -0 */
    double p = z * *inf;    /* 0·∞: NaN value, tangent 0 */
    double q = m * *inf;    /* tangent -0 times ∞ */
    double s = x * *inf;    /* ∞ value, tangent ∞ */
    return (isnan(p) ? 1.0 : 0.0) + (isnan(q) ? 1.0 : 0.0) + (isinf(s) ? 2.0 : 0.0) + x * z + m;
}

/* Exactly one passive operand: ordinary constants, and a rounding
 * shifter's size (1.5·2^52: the pair rounds, its tangent is 0). */
static __attribute__((noinline)) double lone_passive(double x, volatile double *big)
{
    double a = x + 3.0;
    double b = 7.0 - x;
    double r = (x * 8.0 + *big) - *big;
    double c = x + 1e15; /* a shifter's binade, no trick */
    return a * b + r + (c - 1e15);
}

/* Registers beyond the cached ones mixed with cached ones. */
static __attribute__((noinline)) double high_registers(double x)
{
    double y;
    __asm__ volatile(
        "movsd %1, %%xmm13\n\t"
        "movapd %%xmm13, %%xmm14\n\t"
        "mulsd %%xmm13, %%xmm14\n\t"  /* x^2 in xmm14 */
        "movapd %%xmm14, %%xmm2\n\t"  /* into a cached register */
        "addsd %%xmm13, %%xmm2\n\t"   /* x^2 + x */
        "movapd %%xmm2, %%xmm15\n\t"
        "mulsd %%xmm13, %%xmm15\n\t"  /* x^3 + x^2 */
        "subsd %%xmm2, %%xmm15\n\t"   /* x^3 - x */
        "movapd %%xmm15, %%xmm3\n\t"
        "divsd %%xmm13, %%xmm3\n\t"   /* x^2 - 1 */
        "addsd %%xmm14, %%xmm3\n\t"   /* 2x^2 - 1 */
        "movsd %%xmm3, %0\n\t"
        : "=m"(y)
        : "m"(x)
        : "xmm2", "xmm3", "xmm13", "xmm14", "xmm15");
    return y;
}

/* A fault in the middle of a block: the first load of *page faults, the
 * handler makes the page readable, and the load runs again. */
static double *page;
static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    (void)uc;
    mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

static __attribute__((noinline)) double fault_in_block(double x)
{
    double a = x * x + 2.0 * x; /* tangents in registers */
    double b = a * x;
    double c = *page;           /* faults once */
    return (a + b) * c + a / c;
}

/* Registers the translation holds as temporaries across instructions
 * (decision 54, CPUs without AVX-512): every xmm register but the
 * operands holds a value the code reads at its end, so each temporary of
 * the tangent code is a live register whose guest value must come back
 * wherever the guest can look -- here in the handler of a fault in the
 * middle of the block, which compares the interrupted registers with
 * what was loaded (xmm2, overwritten by the faulting load, is dead). */
static double held_page_value;
static double *held_page;
static const double known[16] = {0, 0, 102, 103, 104, 105, 106, 107,
                                 108, 109, 110, 111, 112, 113, 114, 115};
static int held_mismatches = -1;
static void on_held_segv(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    (void)si;
    ucontext_t *uc = ucv;
    held_mismatches = 0;
    for (int n = 3; n < 16; n++) {
        double v;
        memcpy(&v, &uc->uc_mcontext.fpregs->_xmm[n], sizeof v);
        held_mismatches += v != known[n];
    }
    mprotect(held_page, 4096, PROT_READ | PROT_WRITE);
}

static __attribute__((noinline)) double held_registers(double x)
{
    double y, after[16];
    __asm__ volatile(
        "movsd 16(%2), %%xmm2\n\t"
        "movsd 24(%2), %%xmm3\n\t"
        "movsd 32(%2), %%xmm4\n\t"
        "movsd 40(%2), %%xmm5\n\t"
        "movsd 48(%2), %%xmm6\n\t"
        "movsd 56(%2), %%xmm7\n\t"
        "movsd 64(%2), %%xmm8\n\t"
        "movsd 72(%2), %%xmm9\n\t"
        "movsd 80(%2), %%xmm10\n\t"
        "movsd 88(%2), %%xmm11\n\t"
        "movsd 96(%2), %%xmm12\n\t"
        "movsd 104(%2), %%xmm13\n\t"
        "movsd 112(%2), %%xmm14\n\t"
        "movsd 120(%2), %%xmm15\n\t"
        "movsd %3, %%xmm0\n\t"
        "movsd %3, %%xmm1\n\t"
        "mulsd %%xmm1, %%xmm0\n\t"   /* x^2 */
        "addsd %%xmm1, %%xmm0\n\t"   /* x^2 + x */
        "mulsd %%xmm1, %%xmm1\n\t"   /* x^2 */
        "subsd %%xmm1, %%xmm0\n\t"   /* x */
        "addsd %%xmm1, %%xmm0\n\t"   /* x^2 + x */
        "movsd (%4), %%xmm2\n\t"     /* faults once: 3x */
        "mulsd %%xmm2, %%xmm0\n\t"   /* 3x^3 + 3x^2 */
        "movsd %%xmm0, %0\n\t"
        "movsd %%xmm3, 24(%1)\n\t"
        "movsd %%xmm4, 32(%1)\n\t"
        "movsd %%xmm5, 40(%1)\n\t"
        "movsd %%xmm6, 48(%1)\n\t"
        "movsd %%xmm7, 56(%1)\n\t"
        "movsd %%xmm8, 64(%1)\n\t"
        "movsd %%xmm9, 72(%1)\n\t"
        "movsd %%xmm10, 80(%1)\n\t"
        "movsd %%xmm11, 88(%1)\n\t"
        "movsd %%xmm12, 96(%1)\n\t"
        "movsd %%xmm13, 104(%1)\n\t"
        "movsd %%xmm14, 112(%1)\n\t"
        "movsd %%xmm15, 120(%1)\n\t"
        : "=m"(y)
        : "r"(after), "r"(known), "m"(x), "r"(held_page)
        : "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
          "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
    int kept = 0;
    for (int n = 3; n < 16; n++)
        kept += after[n] == known[n];
    printf("held registers: %d of 13 seen by the handler as loaded, %d kept\n",
           held_mismatches < 0 ? -1 : 13 - held_mismatches, kept);
    return y;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    double x = atof(argv[1]);
    double one = 1.0;
    DG_SET_DOTVALUE(&x, &one, sizeof x);
    float xf = (float)x;
    float onef = 1.0f;
    DG_SET_DOTVALUE(&xf, &onef, sizeof xf);

    out("scalar_chain", scalar_chain(x));
    out("packed", packed(x));
    out("roots_and_bounds", roots_and_bounds(x));
    outf("floats", floats(xf));
    volatile double inf = INFINITY;
    out("infinities", infinities(x, &inf));
    volatile double big = 6755399441055744.0;
    out("lone_passive", lone_passive(x, &big));
    out("high_registers", high_registers(x));

    page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return 3;
    *page = 3.0 * x;
    mprotect(page, 4096, PROT_NONE);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    out("fault_in_block", fault_in_block(x));

    held_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (held_page == MAP_FAILED)
        return 3;
    held_page_value = 3.0 * x;
    *held_page = held_page_value;
    mprotect(held_page, 4096, PROT_NONE);
    sa.sa_sigaction = on_held_segv;
    sigaction(SIGSEGV, &sa, NULL);
    out("held_registers", held_registers(x));

    return 0;
}
