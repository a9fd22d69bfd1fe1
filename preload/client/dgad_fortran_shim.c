/*
 * C side of dgad's Fortran client API: the functions that the modules
 * `derivgrind_clientrequests` (derivgrind_clientrequests.f90) and `dgad`
 * (dgad.f90) bind to with iso_c_binding.  Each issues the client requests of
 * <dgad.h> / <valgrind/derivgrind.h>; run natively, they do nothing and
 * return the requests' defaults.
 *
 * Built into libdgadclient.a by the Makefile next to this file.
 */
#include <stdint.h>

#include "dgad.h"
#include "valgrind/derivgrind.h"

/* -----------------------------------------------------------------------
 * Derivgrind's Fortran interface (module derivgrind_clientrequests).
 *
 * Its dummies are `type(c_ptr) :: val` and `integer(c_int), intent(in) ::
 * size_` without VALUE, so Fortran passes the address of the c_ptr and of
 * the integer: the variable's address is *val.
 * ----------------------------------------------------------------------- */

void dg_set_dotvalue(void **val, void **dotval, int *size);
void dg_get_dotvalue(void **val, void **dotval, int *size);
void dg_inputf(void **val);
void dg_outputf(void **val);
void dg_mark_float(void **val, int *size);
void dg_clearf(void);
void valgrind_set_derivative(void **val, void **dotval, int *size);
void valgrind_get_derivative(void **val, void **dotval, int *size);

void dg_set_dotvalue(void **val, void **dotval, int *size)
{
    DG_SET_DOTVALUE(*val, *dotval, *size);
}

void dg_get_dotvalue(void **val, void **dotval, int *size)
{
    DG_GET_DOTVALUE(*val, *dotval, *size);
}

/* The type of the variable is not known here; it does not matter, since an
 * index is attached to the address of a value of any width.  The value passed
 * along for diagnostics is 0. */
void dg_inputf(void **val)
{
    (void)dgad_mark_input_(*val, 0.0, 1);
}

void dg_outputf(void **val)
{
    (void)dgad_mark_output_(*val, 0.0, 1);
}

void dg_mark_float(void **val, int *size)
{
    (void)dgad_mark_float_(*val, (unsigned long)*size);
}

void dg_clearf(void)
{
}

void valgrind_set_derivative(void **val, void **dotval, int *size)
{
    DG_SET_DOTVALUE(*val, *dotval, *size);
}

void valgrind_get_derivative(void **val, void **dotval, int *size)
{
    DG_GET_DOTVALUE(*val, *dotval, *size);
}

/* -----------------------------------------------------------------------
 * dgad's own Fortran interface (module dgad).  Everything by reference; one
 * function per operation and real kind (4 = float, 8 = double, 10 = long
 * double).  Indices are passed as int64_t (Fortran has no unsigned type).
 * ----------------------------------------------------------------------- */

#define DGAD_F_KIND(SUFFIX, TYPE, CNAME)                                      \
    void dgad_f_input_##SUFFIX(TYPE *x, int64_t *index);                     \
    void dgad_f_input_##SUFFIX(TYPE *x, int64_t *index)                      \
    {                                                                         \
        *index = (int64_t)dgad_input_##CNAME(x);                              \
    }                                                                         \
    void dgad_f_output_##SUFFIX(const TYPE *y, int64_t *index);              \
    void dgad_f_output_##SUFFIX(const TYPE *y, int64_t *index)               \
    {                                                                         \
        *index = (int64_t)dgad_output_##CNAME(y);                             \
    }                                                                         \
    int64_t dgad_f_get_index_##SUFFIX(const TYPE *x);                        \
    int64_t dgad_f_get_index_##SUFFIX(const TYPE *x)                         \
    {                                                                         \
        return (int64_t)dgad_get_index(x);                                    \
    }                                                                         \
    void dgad_f_set_index_##SUFFIX(TYPE *x, const int64_t *index);           \
    void dgad_f_set_index_##SUFFIX(TYPE *x, const int64_t *index)            \
    {                                                                         \
        dgad_set_index(x, (dgad_index_t)*index);                              \
    }                                                                         \
    void dgad_f_set_dot_##SUFFIX(TYPE *x, const TYPE *dot);                  \
    void dgad_f_set_dot_##SUFFIX(TYPE *x, const TYPE *dot)                   \
    {                                                                         \
        dgad_set_dotvalue(x, dot, sizeof(TYPE));                              \
    }                                                                         \
    TYPE dgad_f_get_dot_##SUFFIX(const TYPE *x);                             \
    TYPE dgad_f_get_dot_##SUFFIX(const TYPE *x)                              \
    {                                                                         \
        TYPE dot = 0;                                                         \
        dgad_get_dotvalue(x, &dot, sizeof(TYPE));                             \
        return dot;                                                           \
    }

DGAD_F_KIND(r4, float, float)
DGAD_F_KIND(r8, double, double)
DGAD_F_KIND(r10, long double, ldouble)

int dgad_f_mode(void);
int dgad_f_mode(void)
{
    return dgad_mode();
}

long dgad_f_disable_adjust(const long *plus, const long *minus);
long dgad_f_disable_adjust(const long *plus, const long *minus)
{
    return dgad_disable_adjust(*plus, *minus);
}

int64_t dgad_f_new_index(const int64_t *index1, const int64_t *index2,
                         const double *partial1, const double *partial2,
                         const double *value);
int64_t dgad_f_new_index(const int64_t *index1, const int64_t *index2,
                         const double *partial1, const double *partial2,
                         const double *value)
{
    return (int64_t)dgad_new_index((dgad_index_t)*index1, (dgad_index_t)*index2,
                                   *partial1, *partial2, *value);
}

int64_t dgad_f_new_index_noactivity(const int64_t *index1, const int64_t *index2,
                                    const double *partial1, const double *partial2,
                                    const double *value);
int64_t dgad_f_new_index_noactivity(const int64_t *index1, const int64_t *index2,
                                    const double *partial1, const double *partial2,
                                    const double *value)
{
    return (int64_t)dgad_new_index_noactivity((dgad_index_t)*index1,
                                              (dgad_index_t)*index2,
                                              *partial1, *partial2, *value);
}

void dgad_f_index_to_file(const int *which, const int64_t *index);
void dgad_f_index_to_file(const int *which, const int64_t *index)
{
    dgad_index_to_file(*which == DGAD_OUTPUT_FILE ? DGAD_OUTPUT_FILE : DGAD_INPUT_FILE,
                       (dgad_index_t)*index);
}
