/*
 * <dgad.h> -- client API of dgad, automatic differentiation of compiled
 * programs by dynamic binary translation.
 *
 * Mark the independent variables (inputs) and dependent variables (outputs)
 * of a computation; run the program under libdgad.so in recording mode; the
 * runtime writes the tape and the two index files, from which the evaluator
 * computes derivatives.
 *
 *     #include <dgad.h>
 *     double x = 3.0;
 *     dgad_input(&x);           // x becomes an AD input
 *     double y = x * x;
 *     dgad_output(&y);          // y becomes an AD output
 *
 * Compile with -I<dgad>/include.  Nothing needs to be linked: every function
 * here is static inline and issues one or a few "client requests" (see
 * <dgad/request.h>), instruction sequences that the dgad runtime recognises
 * and that are no-ops on a real CPU.  A marked program therefore also runs
 * natively (without libdgad.so): every function then does nothing to the
 * program's values and returns its default, 0 (mode 0, index 0, dot value
 * 0).  Defining NVALGRIND or DGAD_NO_CLIENT_REQUESTS removes the requests at
 * compile time.
 *
 * The requests are Derivgrind's, so the same program also works under
 * Derivgrind (Valgrind); <valgrind/derivgrind.h> offers Derivgrind's own
 * macro names.
 *
 * Indices: in recording mode every floating-point value carries an 8-byte
 * index (0 = passive, i.e. not depending on any input), attached to the
 * address of its first byte; float, double and long double values carry one
 * index each.
 *
 * C: dgad_input, dgad_output, dgad_input_array, dgad_output_array,
 * dgad_set_dot and dgad_get_dot are type-generic (_Generic, C11 or GCC/Clang
 * in any mode) over float, double and long double; the typed functions
 * (dgad_input_double, ...) are always available.  C++: the same names are
 * overloaded functions.
 */
#ifndef DGAD_H
#define DGAD_H

/* Treat this header as a system header (no warnings from its own code under
 * the user's strict warning flags), unless DGAD_HEADER_WARNINGS is defined
 * (the self-test defines it). */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(DGAD_HEADER_WARNINGS)
#  pragma GCC system_header
#endif

#include <stddef.h>
#include <stdint.h>

#include "dgad/request.h"

#ifdef __cplusplus
extern "C++" {
#endif

/* An 8-byte tape index; 0 means passive. */
typedef uint64_t dgad_index_t;

/* Index files, for dgad_index_to_file. */
typedef enum {
    DGAD_INPUT_FILE = DGAD_INDEXFILE_INPUT_,   /* input index file  */
    DGAD_OUTPUT_FILE = DGAD_INDEXFILE_OUTPUT_  /* output index file */
} dgad_indexfile_t;

/* Modes, as returned by dgad_mode. */
#define DGAD_MODE_NATIVE 0     /* not running under dgad/Derivgrind    */
#define DGAD_MODE_DOT 'd'      /* forward mode: dot values propagated   */
#define DGAD_MODE_RECORD 'b'   /* recording mode: tape written          */

/* ---------------------------------------------------------------------
 * Mode and disabling
 * --------------------------------------------------------------------- */

/* The runtime's mode: DGAD_MODE_RECORD ('b') when recording,
 * DGAD_MODE_DOT ('d') in forward mode, DGAD_MODE_NATIVE (0) natively. */
DGAD_INLINE_ int dgad_mode(void)
{
    return (int)dgad_client_request_(0, DGAD_REQ_GET_MODE, 0, 0, 0, 0, 0);
}

/* Non-zero when running under dgad (or Derivgrind), 0 natively. */
DGAD_INLINE_ int dgad_running(void)
{
    return dgad_mode() != DGAD_MODE_NATIVE;
}

/* Add `plus` to and subtract `minus` from the runtime's disable counter and
 * return its previous value (0 natively).  While the counter is non-zero,
 * results are recorded as passive (index 0) and no blocks are written. */
DGAD_INLINE_ long dgad_disable_adjust(long plus, long minus)
{
    return (long)dgad_client_request_(0, DGAD_REQ_DISABLE, (unsigned long)plus,
                                      (unsigned long)minus, 0, 0, 0);
}

/* Stop recording (nestable): increments the disable counter. */
DGAD_INLINE_ void dgad_disable(void)
{
    (void)dgad_disable_adjust(1, 0);
}

/* Undo one dgad_disable: decrements the disable counter. */
DGAD_INLINE_ void dgad_enable(void)
{
    (void)dgad_disable_adjust(0, 1);
}

/* ---------------------------------------------------------------------
 * Inputs and outputs (recording mode)
 * --------------------------------------------------------------------- */

/* Mark *x as an AD input: the runtime appends a tape block without operands,
 * gives *x its index, and appends the index to the input index file.  The
 * value of *x is not changed.  Returns the new index (0 natively). */
DGAD_INLINE_ dgad_index_t dgad_input_float(float *x)
{
    return dgad_mark_input_(x, (double)*x, 1);
}
DGAD_INLINE_ dgad_index_t dgad_input_double(double *x)
{
    return dgad_mark_input_(x, *x, 1);
}
DGAD_INLINE_ dgad_index_t dgad_input_ldouble(long double *x)
{
    return dgad_mark_input_(x, (double)*x, 1);
}

/* Mark *y as an AD output: the runtime appends a block whose only operand is
 * the index of *y (partial derivative 1) and appends that block's index to
 * the output index file.  Returns that index (0 natively). */
DGAD_INLINE_ dgad_index_t dgad_output_float(const float *y)
{
    return dgad_mark_output_(y, (double)*y, 1);
}
DGAD_INLINE_ dgad_index_t dgad_output_double(const double *y)
{
    return dgad_mark_output_(y, *y, 1);
}
DGAD_INLINE_ dgad_index_t dgad_output_ldouble(const long double *y)
{
    return dgad_mark_output_(y, (double)*y, 1);
}

/* dgad_input on x[0], ..., x[n-1], in this order. */
DGAD_INLINE_ void dgad_input_array_float(float *x, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        (void)dgad_input_float(&x[i]);
}
DGAD_INLINE_ void dgad_input_array_double(double *x, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        (void)dgad_input_double(&x[i]);
}
DGAD_INLINE_ void dgad_input_array_ldouble(long double *x, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        (void)dgad_input_ldouble(&x[i]);
}

/* dgad_output on y[0], ..., y[n-1], in this order. */
DGAD_INLINE_ void dgad_output_array_float(const float *y, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        (void)dgad_output_float(&y[i]);
}
DGAD_INLINE_ void dgad_output_array_double(const double *y, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        (void)dgad_output_double(&y[i]);
}
DGAD_INLINE_ void dgad_output_array_ldouble(const long double *y, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        (void)dgad_output_ldouble(&y[i]);
}

/* ---------------------------------------------------------------------
 * Indices and tape blocks (recording mode)
 * --------------------------------------------------------------------- */

/* The index of the floating-point value at `addr` (0 if passive, and 0
 * natively). */
DGAD_INLINE_ dgad_index_t dgad_get_index(const volatile void *addr)
{
    unsigned long long index = 0;
    dgad_client_request_(0, DGAD_REQ_GET_INDEX, DGAD_PTR_(addr),
                         DGAD_PTR_(&index), 0, 0, 0);
    return (dgad_index_t)index;
}

/* Give the floating-point value at `addr` the index `index` (0 makes it
 * passive).  Natively nothing happens. */
DGAD_INLINE_ void dgad_set_index(const volatile void *addr, dgad_index_t index)
{
    unsigned long long i = index;
    dgad_client_request_(0, DGAD_REQ_SET_INDEX, DGAD_PTR_(addr),
                         DGAD_PTR_(&i), 0, 0, 0);
}

/* Append a tape block for a result with operands of indices `index1`,
 * `index2` and partial derivatives `partial1`, `partial2`; `value` is the
 * result's value (diagnostics only).  With activity analysis: returns 0 and
 * writes no block when both operand indices are 0.  Returns the new index
 * (0 natively).  Use with dgad_set_index to attach it to a value. */
DGAD_INLINE_ dgad_index_t dgad_new_index(dgad_index_t index1, dgad_index_t index2,
                                         double partial1, double partial2,
                                         double value)
{
    unsigned long long i1 = index1, i2 = index2, result = 0;
    double p1 = partial1, p2 = partial2, v = value;
    dgad_new_index_request_(DGAD_REQ_NEW_INDEX, &i1, &i2, &p1, &p2, &result, &v);
    return (dgad_index_t)result;
}

/* As dgad_new_index, but always appends a block and returns its non-zero
 * index (0 natively). */
DGAD_INLINE_ dgad_index_t dgad_new_index_noactivity(dgad_index_t index1,
                                                    dgad_index_t index2,
                                                    double partial1,
                                                    double partial2,
                                                    double value)
{
    unsigned long long i1 = index1, i2 = index2, result = 0;
    double p1 = partial1, p2 = partial2, v = value;
    dgad_new_index_request_(DGAD_REQ_NEW_INDEX_NOACTIVITYANALYSIS,
                            &i1, &i2, &p1, &p2, &result, &v);
    return (dgad_index_t)result;
}

/* Append `index` to the input (DGAD_INPUT_FILE) or output (DGAD_OUTPUT_FILE)
 * index file.  Natively nothing happens. */
DGAD_INLINE_ void dgad_index_to_file(dgad_indexfile_t which, dgad_index_t index)
{
    unsigned long long i = index;
    dgad_client_request_(0, DGAD_REQ_INDEX_TO_FILE, (unsigned long)which,
                         DGAD_PTR_(&i), 0, 0, 0);
}

/* ---------------------------------------------------------------------
 * Dot values (forward mode)
 * --------------------------------------------------------------------- */

/* Copy the dot value (tangent) of the `size`-byte floating-point variable at
 * `addr` to `dot`, a variable of the same type.  Only in forward mode;
 * otherwise, and natively, `dot` is left unchanged. */
DGAD_INLINE_ void dgad_get_dotvalue(const volatile void *addr, void *dot, size_t size)
{
    dgad_client_request_(0, DGAD_REQ_GET_DOTVALUE, DGAD_PTR_(addr),
                         DGAD_PTR_(dot), (unsigned long)size, 0, 0);
}

/* Set the dot value of the `size`-byte floating-point variable at `addr`
 * from `dot`, a variable of the same type.  Only in forward mode. */
DGAD_INLINE_ void dgad_set_dotvalue(const volatile void *addr, const void *dot,
                                    size_t size)
{
    dgad_client_request_(0, DGAD_REQ_SET_DOTVALUE, DGAD_PTR_(addr),
                         DGAD_PTR_(dot), (unsigned long)size, 0, 0);
}

/* Typed forms: set the dot value of *x to `dot`; get the dot value of *x
 * (0 when not in forward mode, and natively). */
DGAD_INLINE_ void dgad_set_dot_float(float *x, float dot)
{
    dgad_set_dotvalue(x, &dot, sizeof dot);
}
DGAD_INLINE_ void dgad_set_dot_double(double *x, double dot)
{
    dgad_set_dotvalue(x, &dot, sizeof dot);
}
DGAD_INLINE_ void dgad_set_dot_ldouble(long double *x, long double dot)
{
    dgad_set_dotvalue(x, &dot, sizeof dot);
}
DGAD_INLINE_ float dgad_get_dot_float(const float *x)
{
    float dot = 0.0f;
    dgad_get_dotvalue(x, &dot, sizeof dot);
    return dot;
}
DGAD_INLINE_ double dgad_get_dot_double(const double *x)
{
    double dot = 0.0;
    dgad_get_dotvalue(x, &dot, sizeof dot);
    return dot;
}
DGAD_INLINE_ long double dgad_get_dot_ldouble(const long double *x)
{
    long double dot = 0.0L;
    dgad_get_dotvalue(x, &dot, sizeof dot);
    return dot;
}

/* ---------------------------------------------------------------------
 * Type-generic names
 * --------------------------------------------------------------------- */

#ifdef __cplusplus

inline dgad_index_t dgad_input(float *x) { return dgad_input_float(x); }
inline dgad_index_t dgad_input(double *x) { return dgad_input_double(x); }
inline dgad_index_t dgad_input(long double *x) { return dgad_input_ldouble(x); }

inline dgad_index_t dgad_output(const float *y) { return dgad_output_float(y); }
inline dgad_index_t dgad_output(const double *y) { return dgad_output_double(y); }
inline dgad_index_t dgad_output(const long double *y) { return dgad_output_ldouble(y); }

inline void dgad_input_array(float *x, size_t n) { dgad_input_array_float(x, n); }
inline void dgad_input_array(double *x, size_t n) { dgad_input_array_double(x, n); }
inline void dgad_input_array(long double *x, size_t n) { dgad_input_array_ldouble(x, n); }

inline void dgad_output_array(const float *y, size_t n) { dgad_output_array_float(y, n); }
inline void dgad_output_array(const double *y, size_t n) { dgad_output_array_double(y, n); }
inline void dgad_output_array(const long double *y, size_t n) { dgad_output_array_ldouble(y, n); }

inline void dgad_set_dot(float *x, float dot) { dgad_set_dot_float(x, dot); }
inline void dgad_set_dot(double *x, double dot) { dgad_set_dot_double(x, dot); }
inline void dgad_set_dot(long double *x, long double dot) { dgad_set_dot_ldouble(x, dot); }

inline float dgad_get_dot(const float *x) { return dgad_get_dot_float(x); }
inline double dgad_get_dot(const double *x) { return dgad_get_dot_double(x); }
inline long double dgad_get_dot(const long double *x) { return dgad_get_dot_ldouble(x); }

} /* extern "C++" */

#elif (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L) \
      || defined(__clang__) || (defined(__GNUC__) && (__GNUC__ > 4 || (__GNUC__ == 4 && __GNUC_MINOR__ >= 9)))

/* Before C11, _Generic is a GCC/Clang extension: say so, for -pedantic. */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#  define DGAD_GENERIC_ _Generic
#else
#  define DGAD_GENERIC_ __extension__ _Generic
#endif

/* dgad_input(&x), dgad_output(&y), dgad_input_array(p, n),
 * dgad_output_array(p, n), dgad_set_dot(&x, dot), dgad_get_dot(&x): the
 * pointer's type (float, double, long double) selects the function. */
#define dgad_input(p) DGAD_GENERIC_((p),                                         \
    float *: dgad_input_float,                                               \
    double *: dgad_input_double,                                             \
    long double *: dgad_input_ldouble)(p)

#define dgad_output(p) DGAD_GENERIC_((p),                                        \
    float *: dgad_output_float, const float *: dgad_output_float,            \
    double *: dgad_output_double, const double *: dgad_output_double,       \
    long double *: dgad_output_ldouble,                                      \
    const long double *: dgad_output_ldouble)(p)

#define dgad_input_array(p, n) DGAD_GENERIC_((p),                                \
    float *: dgad_input_array_float,                                         \
    double *: dgad_input_array_double,                                       \
    long double *: dgad_input_array_ldouble)((p), (n))

#define dgad_output_array(p, n) DGAD_GENERIC_((p),                               \
    float *: dgad_output_array_float,                                        \
    const float *: dgad_output_array_float,                                  \
    double *: dgad_output_array_double,                                      \
    const double *: dgad_output_array_double,                                \
    long double *: dgad_output_array_ldouble,                                \
    const long double *: dgad_output_array_ldouble)((p), (n))

#define dgad_set_dot(p, dot) DGAD_GENERIC_((p),                                  \
    float *: dgad_set_dot_float,                                             \
    double *: dgad_set_dot_double,                                           \
    long double *: dgad_set_dot_ldouble)((p), (dot))

#define dgad_get_dot(p) DGAD_GENERIC_((p),                                       \
    float *: dgad_get_dot_float, const float *: dgad_get_dot_float,          \
    double *: dgad_get_dot_double, const double *: dgad_get_dot_double,      \
    long double *: dgad_get_dot_ldouble,                                     \
    const long double *: dgad_get_dot_ldouble)(p)

#endif /* type-generic names */

#endif /* DGAD_H */
