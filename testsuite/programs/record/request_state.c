/* Client requests keep every register they do not answer in.
 *
 * The runtime answers most requests on a light path that saves only what
 * its own code uses (general registers, flags, xmm0-15, MXCSR) and leaves
 * the rest in the CPU. This program issues requests from assembly with
 * every register of the extended state holding a pattern: ymm0-15 (upper
 * halves included), zmm16-31 and k1-k7 where the CPU has AVX-512, a full
 * x87 stack under a non-default control word, MXCSR by turns the default
 * and rounding towards zero with FTZ and DAZ. After each request it
 * compares them all, and the
 * flags DF and AC it set around some of them, and prints each answer.
 *
 * In every mode (and natively, where each request answers its default):
 *   mode: the GET_MODE answer ('d', 'b', or 0 natively and in null mode)
 * Then, in dot mode, a double's and a long double's dot value set and read
 * back (DG_SET_DOTVALUE / DG_GET_DOTVALUE); in dot and record mode, three
 * inputs declared as DG_INPUTF does (NEW_INDEX, SET_INDEX, INDEX_TO_FILE;
 * in record mode the first creates the record files and takes the full
 * path, the others the light one), their indices read back with GET_INDEX,
 * and an output y = v0 v1 + w declared. Exit 1 with the first register
 * that changed on stderr. With `timer N`: N rounds of requests (and more
 * until five signals came) under a 200 µs timer whose handler computes
 * with vector and x87 registers. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <dgad/request.h>

struct state {
    uint8_t y[16][32];      /* 0     */
    uint8_t z[16][64];      /* 512   */
    uint16_t k[8];          /* 1536  */
    uint8_t x87[8][16];     /* 1552  */
    uint32_t mxcsr;         /* 1680  */
    uint32_t has512;        /* 1684  */
    uint64_t rflags_after;  /* 1688  */
    uint64_t result;        /* 1696  */
} __attribute__((aligned(64)));

_Static_assert(__builtin_offsetof(struct state, z) == 512, "layout");
_Static_assert(__builtin_offsetof(struct state, k) == 1536, "layout");
_Static_assert(__builtin_offsetof(struct state, x87) == 1552, "layout");
_Static_assert(__builtin_offsetof(struct state, mxcsr) == 1680, "layout");
_Static_assert(__builtin_offsetof(struct state, has512) == 1684, "layout");
_Static_assert(__builtin_offsetof(struct state, rflags_after) == 1688, "layout");
_Static_assert(__builtin_offsetof(struct state, result) == 1696, "layout");

/* request_in_state(state, block, dflt, extra_flags): loads the state,
 * ORs extra_flags into rflags, issues the request (rax = block, rdx =
 * dflt), records rdx and rflags, restores the flags, stores the state
 * back. */
void request_in_state(struct state *s, const uint64_t *block, uint64_t dflt, uint64_t flags);
__asm__(
    ".text\n"
    ".globl request_in_state\n"
    ".type request_in_state,@function\n"
    "request_in_state:\n"
    "  push %rbx\n push %rbp\n push %r12\n push %r13\n push %r14\n push %r15\n"
    "  sub $8, %rsp\n"
    "  mov %rdi, %r12\n mov %rsi, %r13\n mov %rdx, %r14\n mov %rcx, %r15\n"
    "  fnstcw (%rsp)\n"
    "  movw $0x007f, 2(%rsp)\n" /* single precision, round to nearest, masked */
    "  fldcw 2(%rsp)\n"
    "  fldt 1552+7*16(%r12)\n fldt 1552+6*16(%r12)\n fldt 1552+5*16(%r12)\n fldt 1552+4*16(%r12)\n"
    "  fldt 1552+3*16(%r12)\n fldt 1552+2*16(%r12)\n fldt 1552+1*16(%r12)\n fldt 1552+0*16(%r12)\n"
    "  ldmxcsr 1680(%r12)\n"
    "  vmovdqu 0*32(%r12), %ymm0\n vmovdqu 1*32(%r12), %ymm1\n vmovdqu 2*32(%r12), %ymm2\n"
    "  vmovdqu 3*32(%r12), %ymm3\n vmovdqu 4*32(%r12), %ymm4\n vmovdqu 5*32(%r12), %ymm5\n"
    "  vmovdqu 6*32(%r12), %ymm6\n vmovdqu 7*32(%r12), %ymm7\n vmovdqu 8*32(%r12), %ymm8\n"
    "  vmovdqu 9*32(%r12), %ymm9\n vmovdqu 10*32(%r12), %ymm10\n vmovdqu 11*32(%r12), %ymm11\n"
    "  vmovdqu 12*32(%r12), %ymm12\n vmovdqu 13*32(%r12), %ymm13\n vmovdqu 14*32(%r12), %ymm14\n"
    "  vmovdqu 15*32(%r12), %ymm15\n"
    "  cmpl $0, 1684(%r12)\n je 1f\n"
    "  vmovdqu64 512+0*64(%r12), %zmm16\n vmovdqu64 512+1*64(%r12), %zmm17\n"
    "  vmovdqu64 512+2*64(%r12), %zmm18\n vmovdqu64 512+3*64(%r12), %zmm19\n"
    "  vmovdqu64 512+4*64(%r12), %zmm20\n vmovdqu64 512+5*64(%r12), %zmm21\n"
    "  vmovdqu64 512+6*64(%r12), %zmm22\n vmovdqu64 512+7*64(%r12), %zmm23\n"
    "  vmovdqu64 512+8*64(%r12), %zmm24\n vmovdqu64 512+9*64(%r12), %zmm25\n"
    "  vmovdqu64 512+10*64(%r12), %zmm26\n vmovdqu64 512+11*64(%r12), %zmm27\n"
    "  vmovdqu64 512+12*64(%r12), %zmm28\n vmovdqu64 512+13*64(%r12), %zmm29\n"
    "  vmovdqu64 512+14*64(%r12), %zmm30\n vmovdqu64 512+15*64(%r12), %zmm31\n"
    "  kmovw 1536+1*2(%r12), %k1\n kmovw 1536+2*2(%r12), %k2\n kmovw 1536+3*2(%r12), %k3\n"
    "  kmovw 1536+4*2(%r12), %k4\n kmovw 1536+5*2(%r12), %k5\n kmovw 1536+6*2(%r12), %k6\n"
    "  kmovw 1536+7*2(%r12), %k7\n"
    "1:\n"
    "  pushfq\n pop %rbp\n mov %rbp, %rax\n or %r15, %rax\n push %rax\n popfq\n"
    "  mov %r13, %rax\n mov %r14, %rdx\n"
    "  rol $3, %rdi\n rol $13, %rdi\n rol $61, %rdi\n rol $51, %rdi\n xchg %rbx, %rbx\n"
    "  mov %rdx, 1696(%r12)\n"
    "  pushfq\n pop %rax\n mov %rax, 1688(%r12)\n push %rbp\n popfq\n"
    "  vmovdqu %ymm0, 0*32(%r12)\n vmovdqu %ymm1, 1*32(%r12)\n vmovdqu %ymm2, 2*32(%r12)\n"
    "  vmovdqu %ymm3, 3*32(%r12)\n vmovdqu %ymm4, 4*32(%r12)\n vmovdqu %ymm5, 5*32(%r12)\n"
    "  vmovdqu %ymm6, 6*32(%r12)\n vmovdqu %ymm7, 7*32(%r12)\n vmovdqu %ymm8, 8*32(%r12)\n"
    "  vmovdqu %ymm9, 9*32(%r12)\n vmovdqu %ymm10, 10*32(%r12)\n vmovdqu %ymm11, 11*32(%r12)\n"
    "  vmovdqu %ymm12, 12*32(%r12)\n vmovdqu %ymm13, 13*32(%r12)\n vmovdqu %ymm14, 14*32(%r12)\n"
    "  vmovdqu %ymm15, 15*32(%r12)\n"
    "  cmpl $0, 1684(%r12)\n je 2f\n"
    "  vmovdqu64 %zmm16, 512+0*64(%r12)\n vmovdqu64 %zmm17, 512+1*64(%r12)\n"
    "  vmovdqu64 %zmm18, 512+2*64(%r12)\n vmovdqu64 %zmm19, 512+3*64(%r12)\n"
    "  vmovdqu64 %zmm20, 512+4*64(%r12)\n vmovdqu64 %zmm21, 512+5*64(%r12)\n"
    "  vmovdqu64 %zmm22, 512+6*64(%r12)\n vmovdqu64 %zmm23, 512+7*64(%r12)\n"
    "  vmovdqu64 %zmm24, 512+8*64(%r12)\n vmovdqu64 %zmm25, 512+9*64(%r12)\n"
    "  vmovdqu64 %zmm26, 512+10*64(%r12)\n vmovdqu64 %zmm27, 512+11*64(%r12)\n"
    "  vmovdqu64 %zmm28, 512+12*64(%r12)\n vmovdqu64 %zmm29, 512+13*64(%r12)\n"
    "  vmovdqu64 %zmm30, 512+14*64(%r12)\n vmovdqu64 %zmm31, 512+15*64(%r12)\n"
    "  kmovw %k1, 1536+1*2(%r12)\n kmovw %k2, 1536+2*2(%r12)\n kmovw %k3, 1536+3*2(%r12)\n"
    "  kmovw %k4, 1536+4*2(%r12)\n kmovw %k5, 1536+5*2(%r12)\n kmovw %k6, 1536+6*2(%r12)\n"
    "  kmovw %k7, 1536+7*2(%r12)\n"
    "2:\n"
    "  stmxcsr 1680(%r12)\n"
    "  movl $0x1f80, 4(%rsp)\n ldmxcsr 4(%rsp)\n"
    "  fstpt 1552+0*16(%r12)\n fstpt 1552+1*16(%r12)\n fstpt 1552+2*16(%r12)\n fstpt 1552+3*16(%r12)\n"
    "  fstpt 1552+4*16(%r12)\n fstpt 1552+5*16(%r12)\n fstpt 1552+6*16(%r12)\n fstpt 1552+7*16(%r12)\n"
    "  fldcw (%rsp)\n"
    "  vzeroupper\n"
    "  add $8, %rsp\n"
    "  pop %r15\n pop %r14\n pop %r13\n pop %r12\n pop %rbp\n pop %rbx\n"
    "  ret\n");

#define DF (1UL << 10)
#define AC (1UL << 18)

static uint64_t seed = 0x9e3779b97f4a7c15ULL;
static uint64_t next(void) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
}

static struct state in, out;
static int has512;

static void fill(void) {
    memset(&in, 0, sizeof in);
    for (size_t i = 0; i < sizeof in.y; i += 8) {
        uint64_t v = next();
        memcpy((uint8_t *)in.y + i, &v, 8);
    }
    if (has512) {
        for (size_t i = 0; i < sizeof in.z; i += 8) {
            uint64_t v = next();
            memcpy((uint8_t *)in.z + i, &v, 8);
        }
        for (int i = 1; i < 8; i++)
            in.k[i] = (uint16_t)next();
    }
    for (int i = 0; i < 8; i++) {
        /* Single-precision values (the control word rounds loads to them
         * only on arithmetic; loads are exact), stored as long doubles. */
        long double v = (long double)(float)((int64_t)(next() >> 40) - (1 << 23)) / 7.0f;
        memcpy(in.x87[i], &v, 10);
    }
    /* Alternately the default (the runtime's code must not leave its
     * sticky exception flags in it) and masked, round to zero, FTZ, DAZ. */
    static int odd;
    in.mxcsr = (odd ^= 1) ? 0x1f80 : 0x1f80 | 0x6000 | 0x8000 | 0x40;
    in.has512 = (uint32_t)has512;
}

/* Issues the request with the state loaded; checks that nothing changed. */
static uint64_t request(const char *what, const uint64_t *block, uint64_t dflt, uint64_t flags) {
    fill();
    out = in;
    request_in_state(&out, block, dflt, flags);
    for (int i = 0; i < 16; i++)
        if (memcmp(in.y[i], out.y[i], 32)) {
            fprintf(stderr, "%s: ymm%d changed\n", what, i);
            exit(1);
        }
    if (has512) {
        for (int i = 0; i < 16; i++)
            if (memcmp(in.z[i], out.z[i], 64)) {
                fprintf(stderr, "%s: zmm%d changed\n", what, 16 + i);
                exit(1);
            }
        for (int i = 1; i < 8; i++)
            if (in.k[i] != out.k[i]) {
                fprintf(stderr, "%s: k%d changed\n", what, i);
                exit(1);
            }
    }
    for (int i = 0; i < 8; i++)
        if (memcmp(in.x87[i], out.x87[i], 10)) {
            fprintf(stderr, "%s: st(%d) changed\n", what, i);
            exit(1);
        }
    if (in.mxcsr != out.mxcsr) {
        fprintf(stderr, "%s: MXCSR changed: %#x -> %#x\n", what, in.mxcsr, out.mxcsr);
        exit(1);
    }
    if ((out.rflags_after & (DF | AC)) != flags) {
        fprintf(stderr, "%s: flags %#lx after the request, %#lx set before\n", what,
                (unsigned long)(out.rflags_after & (DF | AC)), (unsigned long)flags);
        exit(1);
    }
    return out.result;
}

/* `timer N`: N requests under a 200 µs timer whose handler computes with
 * the vector and x87 registers, each request checked as above. */
static volatile double handler_sum;
static volatile long handler_runs;

static void on_alarm(int sig) {
    (void)sig;
    double s = 0.0;
    long double l = 1.0L;
    for (int i = 1; i <= 16; i++) {
        s += 1.0 / (double)i;
        l *= 1.0001L;
    }
    handler_sum += s + (double)l;
    handler_runs++;
}

static int under_timer(long n) {
    /* One input declared first: record mode answers requests on the light
     * path once its files exist. */
    static const uint64_t zero = 0;
    static const double zero_partial = 0.0;
    double input = 1.0;
    uint64_t index = 0;
    struct dgad_block_info_ info = {&zero, &zero, &zero_partial, &zero_partial, &index, &input};
    uint64_t new_index[6] = {DGAD_REQ_NEW_INDEX_NOACTIVITYANALYSIS, (uint64_t)&info, 0, 0, 0, 0};
    uint64_t set_index[6] = {DGAD_REQ_SET_INDEX, (uint64_t)&input, (uint64_t)&index, 0, 0, 0};
    uint64_t to_file[6] = {DGAD_REQ_INDEX_TO_FILE, DGAD_INDEXFILE_INPUT_, (uint64_t)&index, 0, 0, 0};
    request("NEW_INDEX", new_index, 0, 0);
    request("SET_INDEX", set_index, 0, 0);
    request("INDEX_TO_FILE", to_file, 0, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &it, NULL);
    uint64_t get_mode[6] = {DGAD_REQ_GET_MODE, 0, 0, 0, 0, 0};
    double x = 2.5, seed = 0.75, got = 0.0;
    uint64_t set_d[6] = {DGAD_REQ_SET_DOTVALUE, (uint64_t)&x, (uint64_t)&seed, 8, 0, 0};
    uint64_t get_d[6] = {DGAD_REQ_GET_DOTVALUE, (uint64_t)&x, (uint64_t)&got, 8, 0, 0};
    /* At least n rounds, and on until a few signals came. */
    for (long i = 0; i < n || handler_runs < 5; i++) {
        request("GET_MODE under a timer", get_mode, 0, i % 2 ? DF : 0);
        request("SET_DOTVALUE under a timer", set_d, 0, 0);
        request("GET_DOTVALUE under a timer", get_d, 0, i % 2 ? 0 : DF);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    fprintf(stderr, "timer: %ld signals handled\n", (long)handler_runs);
    printf("timer ok\n");
    return 0;
}

int main(int argc, char **argv) {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx")) {
        fprintf(stderr, "request_state: this test needs AVX\n");
        return 2;
    }
    has512 = __builtin_cpu_supports("avx512f");
    if (argc == 3 && strcmp(argv[1], "timer") == 0)
        return under_timer(atol(argv[2]));
    uint64_t get_mode[6] = {DGAD_REQ_GET_MODE, 0, 0, 0, 0, 0};
    static const uint64_t flag_sets[3] = {0, DF, AC};
    /* A request block that cannot be read (an unmapped page): the
     * default answer, in every mode. */
    if (request("unreadable block", (const uint64_t *)16, 77, 0) != 77) {
        fprintf(stderr, "unreadable block: not the default answer\n");
        return 1;
    }
    char mode = 0;
    for (int f = 0; f < 3; f++) {
        mode = (char)request("GET_MODE", get_mode, 0, flag_sets[f]);
        printf("mode %d (flags %#lx)\n", mode, (unsigned long)flag_sets[f]);
    }
    if (mode == 'd') {
        double x = 2.5, seed_d = 0.75, got_d = 0.0;
        long double lx = 1.5L, seed_l = 0.1L, got_l = 0.0L;
        uint64_t set_d[6] = {DGAD_REQ_SET_DOTVALUE, (uint64_t)&x, (uint64_t)&seed_d, 8, 0, 0};
        uint64_t get_d[6] = {DGAD_REQ_GET_DOTVALUE, (uint64_t)&x, (uint64_t)&got_d, 8, 0, 0};
        uint64_t set_l[6] = {DGAD_REQ_SET_DOTVALUE, (uint64_t)&lx, (uint64_t)&seed_l, 10, 0, 0};
        uint64_t get_l[6] = {DGAD_REQ_GET_DOTVALUE, (uint64_t)&lx, (uint64_t)&got_l, 10, 0, 0};
        request("SET_DOTVALUE", set_d, 0, DF);
        request("GET_DOTVALUE", get_d, 0, 0);
        request("SET_DOTVALUE long double", set_l, 0, 0);
        request("GET_DOTVALUE long double", get_l, 0, AC);
        printf("dot %a %s\n", got_d, memcmp(&got_l, &seed_l, 10) ? "differs" : "same");
    }
    if (mode == 'd' || mode == 'b') {
        /* Inputs declared as DG_INPUTF does: two doubles and a long double
         * (whose bytes the runtime reads as one, in software). */
        static const uint64_t zero = 0;
        static const double zero_partial = 0.0;
        double v[2] = {3.0, 4.0};
        long double w = 2.75L;
        void *vars[3] = {&v[0], &v[1], &w};
        double values[3] = {3.0, 4.0, 2.75};
        for (int i = 0; i < 3; i++) {
            uint64_t index = 0, back = 0;
            struct dgad_block_info_ info = {&zero, &zero, &zero_partial, &zero_partial, &index, &values[i]};
            uint64_t new_index[6] = {DGAD_REQ_NEW_INDEX_NOACTIVITYANALYSIS, (uint64_t)&info, 0, 0, 0, 0};
            uint64_t set_index[6] = {DGAD_REQ_SET_INDEX, (uint64_t)vars[i], (uint64_t)&index, 0, 0, 0};
            uint64_t to_file[6] = {DGAD_REQ_INDEX_TO_FILE, DGAD_INDEXFILE_INPUT_, (uint64_t)&index, 0, 0, 0};
            uint64_t get_index[6] = {DGAD_REQ_GET_INDEX, (uint64_t)vars[i], (uint64_t)&back, 0, 0, 0};
            request("NEW_INDEX_NOACTIVITYANALYSIS", new_index, 0, 0);
            request("SET_INDEX", set_index, 0, DF);
            request("INDEX_TO_FILE", to_file, 0, 0);
            request("GET_INDEX", get_index, 0, 0);
            if (mode == 'b')
                printf("input %d: index %s\n", i, index != 0 && back == index ? "kept" : "lost");
        }
        /* A declaration whose result pointer cannot be written: nothing is
         * written there, and the program goes on (natively the request
         * writes nothing either). */
        {
            double lost = 1.0;
            struct dgad_block_info_ info = {&zero, &zero, &zero_partial, &zero_partial,
                                            (void *)16, &lost};
            uint64_t new_index[6] = {DGAD_REQ_NEW_INDEX_NOACTIVITYANALYSIS, (uint64_t)&info, 0, 0, 0, 0};
            request("NEW_INDEX to an unwritable result", new_index, 0, 0);
        }
        /* The output y = v0 v1 + w, so that the recording can be evaluated:
         * its gradient is (v1, v0, 1) = (4, 3, 1). */
        double y = v[0] * v[1] + (double)w;
        uint64_t y_index = 0, out_index = 0;
        static const double one = 1.0;
        uint64_t get_y[6] = {DGAD_REQ_GET_INDEX, (uint64_t)&y, (uint64_t)&y_index, 0, 0, 0};
        request("GET_INDEX of the output", get_y, 0, 0);
        struct dgad_block_info_ info = {&y_index, &zero, &one, &zero_partial, &out_index, &y};
        uint64_t new_index[6] = {DGAD_REQ_NEW_INDEX_NOACTIVITYANALYSIS, (uint64_t)&info, 0, 0, 0, 0};
        uint64_t to_file[6] = {DGAD_REQ_INDEX_TO_FILE, DGAD_INDEXFILE_OUTPUT_, (uint64_t)&out_index, 0, 0, 0};
        request("NEW_INDEX of the output", new_index, 0, 0);
        request("INDEX_TO_FILE of the output", to_file, 0, 0);
        printf("y = %g\n", y);
    }
    return 0;
}
