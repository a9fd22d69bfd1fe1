/*
 * fakegrind -- a minimal stand-in for the dgad runtime that answers the
 * client requests of a test program, so that the client API can be tested
 * end to end (argument blocks, pointers, results) before libdgad.so does.
 *
 *   fakegrind [-m b|d] [-o DIR] [-v] -- PROGRAM [ARGS...]
 *
 * It runs PROGRAM under ptrace, finds every occurrence of the 19-byte
 * client-request sequence in the main executable's code, puts a breakpoint
 * on it, and when one is hit reads the six words at %rax, answers the
 * request into %rdx (unknown requests keep the default that is in %rdx), and
 * resumes after the sequence.  It does no AD: indices are only what the
 * requests set.  The model:
 *   mode 'b' (default): SET_INDEX/GET_INDEX keep an address -> index map,
 *     NEW_INDEX[_NOACTIVITYANALYSIS] numbers blocks 1, 2, ... and writes
 *     "index index1 index2 partial1 partial2" lines to DIR/tape.txt,
 *     INDEX_TO_FILE appends to DIR/dg-input-indices / DIR/dg-output-indices;
 *     dot-value requests are ignored.
 *   mode 'd': SET_DOTVALUE/GET_DOTVALUE keep an address -> bytes map; index
 *     requests are ignored.
 *   GET_MODE answers the mode; DISABLE adjusts a counter and answers its
 *   previous value; GET_FLAGS/SET_FLAGS and unknown codes are not answered.
 *   Answered requests other than these return 1.
 * Exit status: the program's, or 125 on a fakegrind error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static const unsigned char SEQ[19] = {
    0x48, 0xc1, 0xc7, 0x03, 0x48, 0xc1, 0xc7, 0x0d, 0x48, 0xc1,
    0xc7, 0x3d, 0x48, 0xc1, 0xc7, 0x33, 0x48, 0x87, 0xdb};

#define BASE 0x44470000UL
static const char *const NAMES[] = {
    "GET_DOTVALUE", "SET_DOTVALUE", "DISABLE", "GET_INDEX", "SET_INDEX",
    "NEW_INDEX", "NEW_INDEX_NOACTIVITYANALYSIS", "INDEX_TO_FILE", "GET_MODE",
    "GET_FLAGS", "SET_FLAGS"};

static pid_t child;
static int memfd = -1;
static int verbose;
static char mode = 'b';
static long disable_counter;
static uint64_t next_index = 1;
static FILE *tape, *infile, *outfile;
static unsigned long n_requests;

#define MAXBP 4096
static uint64_t bps[MAXBP];
static int nbps;

struct entry { uint64_t addr; unsigned size; unsigned char bytes[16]; };
#define MAXENT 65536
static struct entry idxmap[MAXENT], dotmap[MAXENT];
static int nidx, ndot;

static void die(const char *what)
{
    fprintf(stderr, "fakegrind: %s: %s\n", what, strerror(errno));
    if (child > 0)
        kill(child, SIGKILL);
    exit(125);
}

static void rd(uint64_t addr, void *buf, size_t n)
{
    if (pread(memfd, buf, n, (off_t)addr) != (ssize_t)n)
        die("read child memory");
}

static void wr(uint64_t addr, const void *buf, size_t n)
{
    if (pwrite(memfd, buf, n, (off_t)addr) != (ssize_t)n)
        die("write child memory");
}

static struct entry *lookup(struct entry *map, int *n, uint64_t addr, int create)
{
    int i;
    for (i = 0; i < *n; i++)
        if (map[i].addr == addr)
            return &map[i];
    if (!create)
        return NULL;
    if (*n == MAXENT) {
        errno = ENOMEM;
        die("map full");
    }
    memset(&map[*n], 0, sizeof map[*n]);
    map[*n].addr = addr;
    return &map[(*n)++];
}

/* Put a breakpoint on every request sequence in the main executable. */
static void set_breakpoints(void)
{
    char path[64], exe[4096], line[8192];
    ssize_t len;
    FILE *maps;
    snprintf(path, sizeof path, "/proc/%d/exe", (int)child);
    len = readlink(path, exe, sizeof exe - 1);
    if (len < 0)
        die("readlink exe");
    exe[len] = 0;
    snprintf(path, sizeof path, "/proc/%d/maps", (int)child);
    maps = fopen(path, "r");
    if (!maps)
        die("open maps");
    while (fgets(line, sizeof line, maps)) {
        unsigned long lo, hi;
        char perms[8], file[4096] = "";
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %4095s", &lo, &hi, perms, file) < 3)
            continue;
        if (perms[2] != 'x' || strcmp(file, exe) != 0)
            continue;
        {
            size_t n = hi - lo, i;
            unsigned char *buf = malloc(n);
            if (!buf)
                die("malloc");
            rd(lo, buf, n);
            for (i = 0; i + sizeof SEQ <= n; i++) {
                if (memcmp(buf + i, SEQ, sizeof SEQ) == 0) {
                    unsigned char cc = 0xcc;
                    if (nbps == MAXBP) {
                        errno = ENOMEM;
                        die("too many request sites");
                    }
                    bps[nbps++] = lo + i;
                    wr(lo + i, &cc, 1);
                }
            }
            free(buf);
        }
    }
    fclose(maps);
    if (verbose)
        fprintf(stderr, "fakegrind: %d request sites in %s\n", nbps, exe);
}

static int is_bp(uint64_t addr)
{
    int i;
    for (i = 0; i < nbps; i++)
        if (bps[i] == addr)
            return 1;
    return 0;
}

/* Answer one request; returns 1 and sets *result if answered. */
static int handle(const uint64_t a[6], uint64_t *result)
{
    uint64_t code = a[0];
    n_requests++;
    if (verbose) {
        const char *name = (code >= BASE && code - BASE < sizeof NAMES / sizeof *NAMES)
                               ? NAMES[code - BASE] : "?";
        fprintf(stderr, "fakegrind: %s(0x%llx, 0x%llx, 0x%llx, 0x%llx, 0x%llx)\n", name,
                (unsigned long long)a[1], (unsigned long long)a[2],
                (unsigned long long)a[3], (unsigned long long)a[4],
                (unsigned long long)a[5]);
    }
    switch (code) {
    case BASE + 0: /* GET_DOTVALUE(addr, dot_addr, size) */
    case BASE + 1: { /* SET_DOTVALUE(addr, dot_addr, size) */
        struct entry *e;
        unsigned char zero[16] = {0};
        if (mode != 'd')
            return 0;
        if (a[3] > 16) {
            errno = EINVAL;
            die("dot value size > 16");
        }
        if (code == BASE + 1) {
            e = lookup(dotmap, &ndot, a[1], 1);
            e->size = (unsigned)a[3];
            rd(a[2], e->bytes, a[3]);
        } else {
            e = lookup(dotmap, &ndot, a[1], 0);
            wr(a[2], e ? e->bytes : zero, a[3]);
        }
        *result = 1;
        return 1;
    }
    case BASE + 2: /* DISABLE(plus, minus) */
        *result = (uint64_t)disable_counter;
        disable_counter += (long)a[1] - (long)a[2];
        return 1;
    case BASE + 3: { /* GET_INDEX(addr, index_addr) */
        struct entry *e;
        uint64_t idx;
        if (mode != 'b')
            return 0;
        e = lookup(idxmap, &nidx, a[1], 0);
        idx = 0;
        if (e)
            memcpy(&idx, e->bytes, 8);
        wr(a[2], &idx, 8);
        *result = 1;
        return 1;
    }
    case BASE + 4: { /* SET_INDEX(addr, index_addr) */
        struct entry *e;
        if (mode != 'b')
            return 0;
        e = lookup(idxmap, &nidx, a[1], 1);
        rd(a[2], e->bytes, 8);
        *result = 1;
        return 1;
    }
    case BASE + 5:   /* NEW_INDEX(info) */
    case BASE + 6: { /* NEW_INDEX_NOACTIVITYANALYSIS(info) */
        uint64_t info[6], i1, i2, idx;
        double p1, p2, value;
        if (mode != 'b')
            return 0;
        rd(a[1], info, sizeof info);
        rd(info[0], &i1, 8);
        rd(info[1], &i2, 8);
        rd(info[2], &p1, 8);
        rd(info[3], &p2, 8);
        rd(info[5], &value, 8);
        if (code == BASE + 5 && i1 == 0 && i2 == 0) {
            idx = 0;
        } else {
            idx = next_index++;
            fprintf(tape, "%llu %llu %llu %g %g\n", (unsigned long long)idx,
                    (unsigned long long)i1, (unsigned long long)i2, p1, p2);
        }
        wr(info[4], &idx, 8);
        *result = 1;
        return 1;
    }
    case BASE + 7: { /* INDEX_TO_FILE(which, index_addr) */
        uint64_t idx;
        if (mode != 'b')
            return 0;
        if (a[1] > 1) {
            errno = EINVAL;
            die("INDEX_TO_FILE: bad file");
        }
        rd(a[2], &idx, 8);
        fprintf(a[1] == 0 ? infile : outfile, "%llu\n", (unsigned long long)idx);
        *result = 1;
        return 1;
    }
    case BASE + 8: /* GET_MODE */
        *result = (uint64_t)(unsigned char)mode;
        return 1;
    default:
        return 0;
    }
}

static FILE *open_out(const char *dir, const char *name)
{
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "w");
    if (!f)
        die(path);
    return f;
}

int main(int argc, char **argv)
{
    const char *dir = ".";
    int opt, status;
    char path[64];
    while ((opt = getopt(argc, argv, "+m:o:v")) != -1) {
        if (opt == 'm')
            mode = optarg[0];
        else if (opt == 'o')
            dir = optarg;
        else if (opt == 'v')
            verbose = 1;
        else
            return 125;
    }
    if (optind >= argc) {
        fprintf(stderr, "usage: fakegrind [-m b|d] [-o DIR] [-v] -- PROGRAM [ARGS...]\n");
        return 125;
    }
    tape = open_out(dir, "tape.txt");
    infile = open_out(dir, "dg-input-indices");
    outfile = open_out(dir, "dg-output-indices");

    child = fork();
    if (child < 0)
        die("fork");
    if (child == 0) {
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        execvp(argv[optind], argv + optind);
        perror("fakegrind: exec");
        _exit(127);
    }
    if (waitpid(child, &status, 0) < 0 || !WIFSTOPPED(status))
        die("exec stop");
    ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)(long)PTRACE_O_EXITKILL);
    snprintf(path, sizeof path, "/proc/%d/mem", (int)child);
    memfd = open(path, O_RDWR);
    if (memfd < 0)
        die("open mem");
    set_breakpoints();

    if (ptrace(PTRACE_CONT, child, NULL, NULL) < 0)
        die("cont");
    for (;;) {
        int sig;
        if (waitpid(child, &status, 0) < 0)
            die("waitpid");
        if (WIFEXITED(status) || WIFSIGNALED(status))
            break;
        sig = WSTOPSIG(status);
        if (sig == SIGTRAP) {
            struct user_regs_struct regs;
            uint64_t args[6], result;
            if (ptrace(PTRACE_GETREGS, child, NULL, &regs) < 0)
                die("getregs");
            if (is_bp(regs.rip - 1)) {
                rd(regs.rax, args, sizeof args);
                if (handle(args, &result))
                    regs.rdx = result;
                regs.rip = regs.rip - 1 + sizeof SEQ;
                if (ptrace(PTRACE_SETREGS, child, NULL, &regs) < 0)
                    die("setregs");
                sig = 0;
            }
        }
        if (ptrace(PTRACE_CONT, child, NULL, (void *)(long)sig) < 0)
            die("cont");
    }
    fclose(tape);
    fclose(infile);
    fclose(outfile);
    if (verbose)
        fprintf(stderr, "fakegrind: %lu requests answered or seen\n", n_requests);
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "fakegrind: program killed by signal %d\n", WTERMSIG(status));
        return 128 + WTERMSIG(status);
    }
    return WEXITSTATUS(status);
}
