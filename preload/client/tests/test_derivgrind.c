/*
 * Uses every macro of <valgrind/derivgrind.h> the way Derivgrind programs do.
 * Compiled as C and as C++.  Natively (mode 0) every request must leave the
 * program's data alone and evaluate to 0; under tests/fakegrind (mode 'b' or
 * 'd') the answers of the fake runtime must arrive where they belong.  The
 * index files and tape written under fakegrind -m b are compared by
 * selftest.sh with expected/derivgrind.*.
 */
#include <valgrind/derivgrind.h>
#include <stdio.h>
#include <string.h>

static int failures;
#define CHECK(c)                                                              \
    do {                                                                      \
        if (!(c)) {                                                           \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
            failures++;                                                       \
        }                                                                     \
    } while (0)

/* Derivgrind's test-suite style: template-free helper taking an lvalue. */
static void mark_input(double *a)
{
    DG_INPUTF(*a);
}

int main(void)
{
    char mode = DG_GET_MODE;
    int native = mode == 0, rec = mode == 'b', dot = mode == 'd';
    unsigned long m2 = DERIVGRIND_GET_MODE;
    float xf = 1.5f;
    double xd = 2.5;
    long double xl = 3.5L;
    double y, z, w;
    unsigned long long i, o, in, ni, seven = 7, two = 2;
    double val = 4.0;
    unsigned long r;

    CHECK(native || rec || dot);
    CHECK(m2 == (unsigned long)(unsigned char)mode);

    /* Inputs: indices 1, 2, 3 in recording mode. */
    DG_INPUTF(xf);
    DG_INPUTF(xd);
    DG_INPUTF(xl);
    i = 77; DG_GET_INDEX(&xf, &i); CHECK(i == (rec ? 1u : 77u));
    i = 77; DG_GET_INDEX(&xd, &i); CHECK(i == (rec ? 2u : 77u));
    i = 77; DERIVGRIND_GET_INDEX(&xl, &i); CHECK(i == (rec ? 3u : 77u));

    /* Outputs: y has index 0 under the fake (it does no AD): block 4 =
     * {0, 0, 1, 0}; DG_OUTPUT(xd): block 5 = {2, 0, 1, 0}. */
    y = xd * xd + xf + (double)xl;
    DG_OUTPUTF(y);
    o = DG_OUTPUT(xd);
    CHECK(o == (rec ? 5u : 0u));
    in = DG_INPUT(y); /* block 6, not in the input file */
    CHECK(in == (rec ? 6u : 0u));
    i = 0; DG_GET_INDEX(&y, &i); CHECK(i == (rec ? 6u : 0u));

    /* SET_INDEX */
    z = 1.0;
    DG_SET_INDEX(&z, &seven);
    i = 0; DG_GET_INDEX(&z, &i); CHECK(i == (rec ? 7u : 0u));
    DERIVGRIND_SET_INDEX(&z, &dg_zero);
    i = 5; DG_GET_INDEX(&z, &i); CHECK(i == (rec ? 0u : 5u));

    /* NEW_INDEX with activity analysis: passive operands give 0, no block. */
    ni = 99;
    r = DG_NEW_INDEX(&dg_zero, &dg_zero, &dg_one, &dg_zero, &ni, &val);
    CHECK(ni == (rec ? 0u : 99u));
    CHECK(r == (rec ? 1u : 0u));
    DERIVGRIND_NEW_INDEX(&two, &dg_zero, &dg_one, &dg_zero, &ni, &val); /* 7 */
    CHECK(ni == (rec ? 7u : 99u));
    DG_NEW_INDEX_NOACTIVITYANALYSIS(&dg_zero, &dg_zero, &dg_one, &dg_zero, &ni, &val); /* 8 */
    CHECK(ni == (rec ? 8u : 99u));
    DERIVGRIND_NEW_INDEX_NOACTIVITYANALYSIS(&ni, &two, &dg_one, &dg_one, &ni, &val); /* 9 */
    CHECK(ni == (rec ? 9u : 99u));
    DG_INDEX_TO_FILE(DG_INDEXFILE_OUTPUT, &ni);
    DERIVGRIND_INDEX_TO_FILE(DG_INDEXFILE_INPUT, &two);

    /* An input marked through a pointer inside a function: block 10. */
    w = 6.0;
    mark_input(&w);
    i = 0; DG_GET_INDEX(&w, &i); CHECK(i == (rec ? 10u : 0u));

    /* DISABLE: the fake answers the previous counter value. */
    r = DG_DISABLE(1, 0);
    CHECK(r == 0);
    r = DERIVGRIND_DISABLE(1, 0);
    CHECK(r == (native ? 0u : 1u));
    r = DG_DISABLE(0, 2);
    CHECK(r == (native ? 0u : 2u));

    /* Dot values (forward mode only). */
    {
        double d = 5.0, dd = 0.25, got = -1.0;
        float f = 1.0f, fd = 0.5f, fgot = -1.0f;
        long double l = 2.0L, ld = 0.125L, lgot = -1.0L;
        DG_SET_DOTVALUE(&d, &dd, sizeof d);
        DG_GET_DOTVALUE(&d, &got, sizeof d);
        CHECK(got == (dot ? 0.25 : -1.0));
        DERIVGRIND_SET_DOTVALUE(&f, &fd, sizeof f);
        DERIVGRIND_GET_DOTVALUE(&f, &fgot, sizeof f);
        CHECK(fgot == (dot ? 0.5f : -1.0f));
        VALGRIND_SET_DERIVATIVE(&l, &ld, 10);
        VALGRIND_GET_DERIVATIVE(&l, &lgot, 10);
        CHECK(lgot == (dot ? 0.125L : -1.0L));
        CHECK(d == 5.0 && f == 1.0f && l == 2.0L);
    }

    /* Bit-trick finder requests: not answered by dgad (nor the fake). */
    {
        unsigned char A[8], D[8];
        double t = 1.0;
        memset(A, 0x5a, sizeof A);
        memset(D, 0x5a, sizeof D);
        r = DG_GET_FLAGS(&t, A, D, 8);
        CHECK(r == 0);
        r = DG_SET_FLAGS(&t, A, D, 8);
        CHECK(r == 0);
        DG_MARK_FLOAT(t);
        CHECK(t == 1.0 && A[0] == 0x5a && D[7] == 0x5a);
    }

    DG_CLEARF;

    /* The marked values themselves are unchanged. */
    CHECK(xf == 1.5f && xd == 2.5 && xl == 3.5L && z == 1.0 && w == 6.0);
    CHECK(y == 2.5 * 2.5 + 1.5 + 3.5);
    CHECK(val == 4.0 && seven == 7 && two == 2);

    if (failures) {
        fprintf(stderr, "test_derivgrind: %d failure(s) (mode %d)\n", failures, mode);
        return 1;
    }
    printf("test_derivgrind OK (mode %d)\n", mode);
    return 0;
}
