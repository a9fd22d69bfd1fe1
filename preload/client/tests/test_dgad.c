/*
 * Uses every function of <dgad.h>, with the type-generic names (C _Generic
 * or C++ overloads) and the typed ones.  Compiled as C and as C++.  Natively
 * every call must leave the data alone and return 0; under tests/fakegrind
 * the fake runtime's answers must arrive.  selftest.sh compares the files
 * written under fakegrind -m b with expected/dgad.*.
 */
#include <dgad.h>
#include <stdio.h>

static int failures;
#define CHECK(c)                                                              \
    do {                                                                      \
        if (!(c)) {                                                           \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
            failures++;                                                       \
        }                                                                     \
    } while (0)

int main(void)
{
    int mode = dgad_mode();
    int native = mode == DGAD_MODE_NATIVE, rec = mode == DGAD_MODE_RECORD,
        dot = mode == DGAD_MODE_DOT;
    float xf = 1.5f;
    double xd = 2.5;
    long double xl = 3.5L;
    double a[2][3] = {{1, 2, 3}, {4, 5, 6}};
    float fa[2] = {7.0f, 8.0f};
    long double la[2] = {9.0L, 10.0L};
    const double cy = 11.0;
    double y;
    dgad_index_t i;
    long prev;

    CHECK(native || rec || dot);
    CHECK(dgad_running() == !native);

    /* Inputs, type-generic: indices 1, 2, 3. */
    i = dgad_input(&xf);
    CHECK(i == (rec ? 1u : 0u));
    i = dgad_input(&xd);
    CHECK(i == (rec ? 2u : 0u));
    i = dgad_input(&xl);
    CHECK(i == (rec ? 3u : 0u));
    CHECK(dgad_get_index(&xf) == (rec ? 1u : 0u));
    CHECK(dgad_get_index(&xd) == (rec ? 2u : 0u));
    CHECK(dgad_get_index(&xl) == (rec ? 3u : 0u));

    /* Arrays, in element order: 4..9 (a), 10, 11 (fa), 12, 13 (la). */
    dgad_input_array(&a[0][0], 6);
    dgad_input_array(fa, 2);
    dgad_input_array(la, 2);
    CHECK(dgad_get_index(&a[0][0]) == (rec ? 4u : 0u));
    CHECK(dgad_get_index(&a[1][2]) == (rec ? 9u : 0u));
    CHECK(dgad_get_index(&fa[1]) == (rec ? 11u : 0u));
    CHECK(dgad_get_index(&la[1]) == (rec ? 13u : 0u));

    /* Typed names: 14, 15, 16. */
    (void)dgad_input_float(&fa[0]);
    (void)dgad_input_double(&a[0][1]);
    (void)dgad_input_ldouble(&la[0]);
    CHECK(dgad_get_index(&la[0]) == (rec ? 16u : 0u));

    /* Outputs: y has index 0 under the fake: block 17 = {0, 0, 1, 0};
     * xd: block 18 = {2, 0, 1, 0}; const cy: 19; arrays: 20, 21 (fa),
     * 22, 23 (a[1][0..1]), 24 (la[1]); typed: 25 (xf). */
    y = xd * xd;
    i = dgad_output(&y);
    CHECK(i == (rec ? 17u : 0u));
    i = dgad_output(&xd);
    CHECK(i == (rec ? 18u : 0u));
    i = dgad_output(&cy);
    CHECK(i == (rec ? 19u : 0u));
    dgad_output_array(fa, 2);
    dgad_output_array(&a[1][0], 2);
    dgad_output_array(&la[1], 1);
    i = dgad_output_float(&xf);
    CHECK(i == (rec ? 25u : 0u));

    /* Indices and blocks. */
    dgad_set_index(&y, 7);
    CHECK(dgad_get_index(&y) == (rec ? 7u : 0u));
    dgad_set_index(&y, 0);
    CHECK(dgad_get_index(&y) == 0);
    i = dgad_new_index(0, 0, 1.0, 0.0, 4.0); /* passive: 0, no block */
    CHECK(i == 0);
    i = dgad_new_index(2, 3, 0.5, 0.25, 4.0); /* 26 */
    CHECK(i == (rec ? 26u : 0u));
    i = dgad_new_index_noactivity(0, 0, 0.0, 0.0, 1.0); /* 27 */
    CHECK(i == (rec ? 27u : 0u));
    dgad_index_to_file(DGAD_OUTPUT_FILE, i);
    dgad_index_to_file(DGAD_INPUT_FILE, 2);

    /* Disabling. */
    prev = dgad_disable_adjust(0, 0);
    CHECK(prev == 0);
    dgad_disable();
    dgad_disable();
    prev = dgad_disable_adjust(0, 0);
    CHECK(prev == (native ? 0 : 2));
    dgad_enable();
    dgad_enable();
    CHECK(dgad_disable_adjust(0, 0) == 0);

    /* Dot values. */
    {
        double d = 5.0;
        float f = 1.0f;
        long double l = 2.0L;
        double raw = -1.0, rawdot = 0.75;
        dgad_set_dot(&d, 0.25);
        dgad_set_dot(&f, 0.5f);
        dgad_set_dot(&l, 0.125L);
        CHECK(dgad_get_dot(&d) == (dot ? 0.25 : 0.0));
        CHECK(dgad_get_dot(&f) == (dot ? 0.5f : 0.0f));
        CHECK(dgad_get_dot(&l) == (dot ? 0.125L : 0.0L));
        CHECK(dgad_get_dot_double(&d) == (dot ? 0.25 : 0.0));
        dgad_set_dotvalue(&d, &rawdot, sizeof d);
        dgad_get_dotvalue(&d, &raw, sizeof d);
        CHECK(raw == (dot ? 0.75 : -1.0));
        dgad_set_dot_float(&f, 2.0f);
        CHECK(dgad_get_dot_float(&f) == (dot ? 2.0f : 0.0f));
        dgad_set_dot_ldouble(&l, 3.0L);
        CHECK(dgad_get_dot_ldouble(&l) == (dot ? 3.0L : 0.0L));
        CHECK(d == 5.0 && f == 1.0f && l == 2.0L);
    }

    /* Values unchanged. */
    CHECK(xf == 1.5f && xd == 2.5 && xl == 3.5L && y == 6.25 && cy == 11.0);
    CHECK(a[0][0] == 1 && a[0][1] == 2 && a[1][2] == 6 && fa[0] == 7.0f && la[1] == 10.0L);

    if (failures) {
        fprintf(stderr, "test_dgad: %d failure(s) (mode %d)\n", failures, mode);
        return 1;
    }
    printf("test_dgad OK (mode %d)\n", mode);
    return 0;
}
