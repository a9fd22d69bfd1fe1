/* Record mode with RIP-relative operands out of the code cache's reach:
 * code in the middle of a 3 GiB PROT_NONE reservation (a JIT compiler's
 * code range: its translations live far away, every RIP-relative operand
 * rewritten with an absolute address), and an operand 1.98 GiB from its
 * code. The shadows must be read and written at the operands' real
 * addresses. Also loads and stores with a 64-bit absolute address
 * (`mov [moffs64], rax`, `mov rax, [moffs64]`: V8 emits them), whose
 * shadow address has no `lea` form. Usage: far_operands X; prints
 * y1 = x*x, y2 = 1/x, y3 = 3x + 3x (through a store and a load), y4 = x*x,
 * y5 = x*x (stored and loaded through moffs64). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <valgrind/derivgrind.h>

#define HIDDEN __attribute__((visibility("hidden")))
extern const unsigned char blob_start[] HIDDEN, blob_end[] HIDDEN;
extern const unsigned char f_sq[] HIDDEN, f_inv[] HIDDEN, f_store[] HIDDEN, f_twice[] HIDDEN;
extern const unsigned char slot_x[] HIDDEN, slot_one[] HIDDEN, slot_y[] HIDDEN;

__asm__(".pushsection .rodata\n"
        ".intel_syntax noprefix\n"
        ".p2align 6\n"
        ".globl blob_start, blob_end, f_sq, f_inv, f_store, f_twice, slot_x, slot_one, slot_y\n"
        "blob_start:\n"
        "f_sq: movsd xmm0, qword ptr [rip + slot_x]\n mulsd xmm0, qword ptr [rip + slot_x]\n ret\n"
        "f_inv: movsd xmm0, qword ptr [rip + slot_one]\n divsd xmm0, qword ptr [rip + slot_x]\n ret\n"
        "f_store: movsd qword ptr [rip + slot_y], xmm0\n ret\n"
        "f_twice: movsd xmm0, qword ptr [rip + slot_y]\n addsd xmm0, qword ptr [rip + slot_y]\n ret\n"
        ".p2align 3\n"
        "slot_x: .double 0\n"
        "slot_one: .double 1\n"
        "slot_y: .double 0\n"
        "blob_end:\n"
        ".att_syntax prefix\n"
        ".popsection\n");

static unsigned char *page;

static void *at(const unsigned char *label)
{
    return page + (label - blob_start);
}

/* mulsd xmm0, [rip + disp32]; ret, with the operand 1.98 GiB above. */
static double times_far(double a, double b)
{
    size_t len = 4UL << 30;
    unsigned char *r = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return 0.0;
    munmap(r, len);
    unsigned char *code = r + (1UL << 30), *data = code + 0x7f000000L;
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
    if (mmap(code, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, flags, -1, 0) != code ||
        mmap(data, 4096, PROT_READ | PROT_WRITE, flags, -1, 0) != data)
        return 0.0;
    memcpy(data, &b, sizeof b);
    static const unsigned char mul[] = {0xf2, 0x0f, 0x59, 0x05, 0, 0, 0, 0, 0xc3};
    memcpy(code, mul, sizeof mul);
    int32_t rel = (int32_t)(data - (code + 8));
    memcpy(code + 4, &rel, sizeof rel);
    double (*f)(double) = (double (*)(double))code;
    return f(a);
}

/* movq rax, xmm0; mov [slot], rax; ret  and
 * mov rax, [slot]; movq xmm0, rax; mulsd xmm0, xmm0; ret */
static double square_through_moffs(double a)
{
    unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        return 0.0;
    static uint64_t slot;
    uint64_t at = (uint64_t)&slot;
    static const unsigned char store[] = {0x66, 0x48, 0x0f, 0x7e, 0xc0, 0x48, 0xa3};
    static const unsigned char load_tail[] = {0x66, 0x48, 0x0f, 0x6e, 0xc0, 0xf2, 0x0f, 0x59, 0xc0, 0xc3};
    memcpy(code, store, sizeof store);
    memcpy(code + sizeof store, &at, 8);
    code[sizeof store + 8] = 0xc3;
    code[64] = 0x48;
    code[65] = 0xa1;
    memcpy(code + 66, &at, 8);
    memcpy(code + 74, load_tail, sizeof load_tail);
    ((void (*)(double))code)(a);
    return ((double (*)(void))(code + 64))();
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fputs("usage: far_operands X\n", stderr);
        return 2;
    }
    double x = strtod(argv[1], NULL);
    DG_INPUTF(x);
    size_t len = 3UL << 30;
    unsigned char *r = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return 1;
    page = r + len / 2;
    if (mprotect(page, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
        return 1;
    memcpy(page, blob_start, (size_t)(blob_end - blob_start));
    memcpy(at(slot_x), &x, sizeof x);
    double y1 = ((double (*)(void))at(f_sq))();
    double y2 = ((double (*)(void))at(f_inv))();
    ((void (*)(double))at(f_store))(3.0 * x);
    double y3 = ((double (*)(void))at(f_twice))();
    double y4 = times_far(x, x);
    double y5 = square_through_moffs(x);
    DG_OUTPUTF(y1);
    DG_OUTPUTF(y2);
    DG_OUTPUTF(y3);
    DG_OUTPUTF(y4);
    DG_OUTPUTF(y5);
    printf("%.17g\n%.17g\n%.17g\n%.17g\n%.17g\n", y1, y2, y3, y4, y5);
    return 0;
}
