// Bit tricks on a marked value, after the cases of Derivgrind's trick tests
// (derivgrind/trick_tests): an exponent added as an integer (to bits read
// from memory, and to bits in a register), frexp by
// masking the exponent, the rounding trick with 1.5·2^52, a round trip
// through zlib, and a value read through a second mapping of its page.
// Usage: bit_tricks CASE. In dot mode (DG_GET_MODE 'd') the input is seeded
// with 1 and the output's tangent printed; in record mode ('b') input and
// output are marked. Prints "CASE value V derivative D expected E".
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <valgrind/derivgrind.h>
#include <gmp.h>
#include <zlib.h>

template <class T> static void input(T &x)
{
    char mode = DG_GET_MODE;
    if (mode == 'd') {
        T one = 1;
        DG_SET_DOTVALUE(&x, &one, sizeof(T));
    } else if (mode == 'b') {
        DG_INPUTF(x);
    }
}

template <class T> static void output(const std::string &name, T y, double expected)
{
    double d = 0;
    char mode = DG_GET_MODE;
    if (mode == 'd') {
        T t = 0;
        DG_GET_DOTVALUE(&y, &t, sizeof(T));
        d = t;
    } else if (mode == 'b') {
        DG_OUTPUTF(y);
    }
    printf("%s value %.9g derivative %.9g expected %.9g\n", name.c_str(), (double)y, d, expected);
}

static uint64_t bits(double v) { uint64_t u; memcpy(&u, &v, 8); return u; }
static double real(uint64_t u) { double v; memcpy(&v, &u, 8); return v; }
static uint32_t bits(float v) { uint32_t u; memcpy(&u, &v, 4); return u; }
static float real(uint32_t u) { float v; memcpy(&v, &u, 4); return v; }

// An exponent add on a value in a register (a function's argument): the
// integer add reads the bits from a general register.
__attribute__((noinline)) static double times32(double a)
{
    return real(uint64_t(bits(a) + (uint64_t(5) << 52)));
}
__attribute__((noinline)) static float times8(float a)
{
    return real(uint32_t(bits(a) + (3u << 23)));
}

// a² + 3a at a = 1.5 in __float128, which is done in software (libgcc),
// on the value's bits in general registers.
template <class T> static void quad_poly(const std::string &c)
{
    T a = 1.5;
    input(a);
    __float128 q = a;
    q = q * q + (__float128)3 * q;
    output(c, (T)q, 2 * 1.5 + 3);
}

int main(int argc, char **argv)
{
    std::string c = argc > 1 ? argv[1] : "";
    volatile uint64_t k64 = 5;
    volatile uint32_t k32 = 3;
    if (c == "exponent_add_double") {
        double a = 2.7;
        input(a);
        output(c, real(bits(a) + (k64 << 52)), 32.0);
    } else if (c == "exponent_add_float") {
        float a = -2.7f;
        input(a);
        output(c, real(bits(a) + (k32 << 23)), 8.0);
    } else if (c == "exponent_add_double_register") {
        double a = 2.7;
        input(a);
        output(c, times32(a), 32.0);
    } else if (c == "exponent_add_float_register") {
        float a = -2.7f;
        input(a);
        output(c, times8(a), 8.0);
    } else if (c == "frexp_mask_double") {
        double a = 38.1;
        input(a);
        output(c, real(uint64_t((bits(a) & 0x800fffffffffffffull) | 0x3fe0000000000000ull)), 1 / 64.0);
    } else if (c == "frexp_mask_float") {
        float a = -38.1f;
        input(a);
        output(c, real((bits(a) & 0x807fffffu) | 0x3f000000u), 1 / 64.0);
    } else if (c == "rounding_double") {
        double a = 123.456;
        input(a);
        volatile double s = 0x1.8p52;
        output(c, (a + s) - s, 0.0);
    } else if (c == "rounding_float") {
        float a = 123.456f;
        input(a);
        volatile float s = 0x1.8p23f;
        output(c, (a + s) - s, 0.0);
    } else if (c == "zlib_round_trip") {
        double x[16];
        for (double &v : x)
            v = 42.0;
        input(x[0]);
        unsigned char packed[1024];
        uLongf n = sizeof packed;
        compress(packed, &n, (const unsigned char *)x, sizeof x);
        double y[16];
        uLongf m = sizeof y;
        uncompress((unsigned char *)y, &m, packed, n);
        output(c, y[0], 1.0);
    } else if (c == "two_mappings") {
        int fd = memfd_create("bit_tricks", 0);
        if (fd < 0 || ftruncate(fd, 4096) != 0)
            return 1;
        double *x = (double *)mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        double *y = (double *)mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0);
        *x = 2.718;
        input(*x);
        output(c, *y, 1.0);
    } else if (c == "float128_double") {
        quad_poly<double>(c);
    } else if (c == "float128_float") {
        quad_poly<float>(c);
    } else if (c == "gmp_float") {
        // Arbitrary precision: the value becomes limbs through integer
        // instructions inside GMP.
        double a = 1.5;
        input(a);
        mpf_t f;
        mpf_init2(f, 128);
        mpf_set_d(f, a);
        mpf_mul(f, f, f);
        double y = mpf_get_d(f);
        mpf_clear(f);
        output(c, y, 2 * 1.5);
    } else if (c == "float16_double") {
        // A double's conversion is libgcc's __truncdfhf2, in software
        // (F16C converts floats only); the product is computed in float.
        double a = 1.5;
        input(a);
        _Float16 h = (_Float16)a;
        h = h * h;
        output(c, (double)h, 2 * 1.5);
    } else {
        fprintf(stderr, "bit_tricks: unknown case '%s'\n", c.c_str());
        return 2;
    }
    return 0;
}
