/*
 * _client.c -- the client requests of dgad's Python package.
 *
 * A plain C shared library (no Python.h, no Python ABI), loaded with ctypes
 * by dgad/__init__.py.  Every function issues Derivgrind's client requests:
 * the instruction sequence that libdgad.so (or Derivgrind under Valgrind)
 * answers and that a real CPU executes as a no-op.  The sequence, request
 * codes and argument blocks are those of include/dgad/request.h (the ABI
 * shared with binaries built against Derivgrind's header); this file repeats
 * the few lines it needs so that the package builds from python/ alone.
 *
 * Values are addressed by pointer: the package passes the address of a
 * Python float's ob_fval, of a numpy scalar's value, or of an array element.
 * `kind` is the value's size in bytes: 4 (float32), 8 (float64) or 16
 * (x87 long double, numpy's longdouble).
 */
#include <stddef.h>
#include <stdint.h>

#define REQ_GET_DOTVALUE 0x44470000UL
#define REQ_SET_DOTVALUE 0x44470001UL
#define REQ_DISABLE 0x44470002UL
#define REQ_GET_INDEX 0x44470003UL
#define REQ_SET_INDEX 0x44470004UL
#define REQ_NEW_INDEX 0x44470005UL
#define REQ_NEW_INDEX_NOACTIVITYANALYSIS 0x44470006UL
#define REQ_INDEX_TO_FILE 0x44470007UL
#define REQ_GET_MODE 0x44470008UL
#define REQ_MARK_INPUT 0x44470100UL
#define REQ_MARK_OUTPUT 0x44470101UL
/* What the mark's index variable holds until dgad's one-request mark
 * answers (a tool that does not know it leaves it). */
#define MARK_UNANSWERED 0xffffffffffffffffULL

#define INDEXFILE_INPUT 0UL
#define INDEXFILE_OUTPUT 1UL

#define EXPORT __attribute__((visibility("default")))

/* One client request: %rax -> {request, a1..a5}, %rdx = default result. */
static unsigned long request(unsigned long dflt, unsigned long req,
                             unsigned long a1, unsigned long a2,
                             unsigned long a3, unsigned long a4,
                             unsigned long a5)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    volatile unsigned long block[6];
    unsigned long result = dflt;
    block[0] = req;
    block[1] = a1;
    block[2] = a2;
    block[3] = a3;
    block[4] = a4;
    block[5] = a5;
    __asm__ __volatile__("rolq $3, %%rdi\n\t"
                         "rolq $13, %%rdi\n\t"
                         "rolq $61, %%rdi\n\t"
                         "rolq $51, %%rdi\n\t"
                         "xchgq %%rbx, %%rbx"
                         : "+d"(result)
                         : "a"(&block[0])
                         : "cc", "memory");
    return result;
#else
    (void)req; (void)a1; (void)a2; (void)a3; (void)a4; (void)a5;
    return dflt;
#endif
}

#define P(x) ((unsigned long)(uintptr_t)(x))

/* Derivgrind's TapeBlockInfo: six pointers. */
struct block_info {
    const void *index1, *index2, *partial1, *partial2;
    void *new_index;
    const void *value;
};

static double value_at(const void *addr, int kind)
{
    if (kind == 4)
        return (double)*(const volatile float *)addr;
    if (kind == 8)
        return *(const volatile double *)addr;
    return (double)*(const volatile long double *)addr;
}

/* 'b' recording, 'd' forward mode, 0 natively. */
EXPORT int dgad_py_mode(void)
{
    return (int)request(0, REQ_GET_MODE, 0, 0, 0, 0, 0);
}

/* Adjusts the disable counter; returns its previous value (0 natively). */
EXPORT long dgad_py_disable(long plus, long minus)
{
    return (long)request(0, REQ_DISABLE, (unsigned long)plus,
                         (unsigned long)minus, 0, 0, 0);
}

EXPORT unsigned long long dgad_py_get_index(const void *addr)
{
    unsigned long long index = 0;
    request(0, REQ_GET_INDEX, P(addr), P(&index), 0, 0, 0);
    return index;
}

EXPORT void dgad_py_set_index(const void *addr, unsigned long long index)
{
    unsigned long long i = index;
    request(0, REQ_SET_INDEX, P(addr), P(&i), 0, 0, 0);
}

/* New block; activity analysis unless `always`.  Returns its index. */
EXPORT unsigned long long dgad_py_new_index(unsigned long long index1,
                                            unsigned long long index2,
                                            double partial1, double partial2,
                                            double value, int always)
{
    unsigned long long i1 = index1, i2 = index2, result = 0;
    double p1 = partial1, p2 = partial2, v = value;
    struct block_info info = {&i1, &i2, &p1, &p2, &result, &v};
    request(0, always ? REQ_NEW_INDEX_NOACTIVITYANALYSIS : REQ_NEW_INDEX,
            P(&info), 0, 0, 0, 0);
    return result;
}

/* dgad's one-request mark (request.h's dgad_mark_one_request_): true with
 * the mark's index in *index when the tool answered; after the first
 * unanswered one, the three requests only. */
static int mark_one_request(unsigned long req, const void *addr, double v,
                            unsigned long long *index)
{
    static int unanswered;
    union { double d; unsigned long u; } bits;
    if (unanswered)
        return 0;
    bits.d = v;
    *(volatile unsigned long long *)index = MARK_UNANSWERED;
    request(0, req, P(addr), bits.u, 1, P(index), 0);
    if (*(volatile unsigned long long *)index != MARK_UNANSWERED)
        return 1;
    unanswered = 1;
    return 0;
}

/* DG_INPUTF on the value at `addr`: new block without operands, its index
 * given to the value and appended to the input index file. */
EXPORT unsigned long long dgad_py_input(void *addr, int kind)
{
    static const unsigned long long zero_index = 0;
    static const double zero = 0.0;
    unsigned long long index = 0;
    double v = value_at(addr, kind);
    if (mark_one_request(REQ_MARK_INPUT, addr, v, &index))
        return index;
    index = 0;
    struct block_info info = {&zero_index, &zero_index, &zero, &zero, &index, &v};
    request(0, REQ_NEW_INDEX_NOACTIVITYANALYSIS, P(&info), 0, 0, 0, 0);
    request(0, REQ_SET_INDEX, P(addr), P(&index), 0, 0, 0);
    request(0, REQ_INDEX_TO_FILE, INDEXFILE_INPUT, P(&index), 0, 0, 0);
    return index;
}

/* DG_OUTPUTF on the value at `addr`: new block {index(value), 0, 1.0, 0},
 * its index appended to the output index file. */
EXPORT unsigned long long dgad_py_output(const void *addr, int kind)
{
    static const unsigned long long zero_index = 0;
    static const double zero = 0.0, one = 1.0;
    unsigned long long value_index = 0, index = 0;
    double v = value_at(addr, kind);
    if (mark_one_request(REQ_MARK_OUTPUT, addr, v, &index))
        return index;
    index = 0;
    request(0, REQ_GET_INDEX, P(addr), P(&value_index), 0, 0, 0);
    struct block_info info = {&value_index, &zero_index, &one, &zero, &index, &v};
    request(0, REQ_NEW_INDEX_NOACTIVITYANALYSIS, P(&info), 0, 0, 0, 0);
    request(0, REQ_INDEX_TO_FILE, INDEXFILE_OUTPUT, P(&index), 0, 0, 0);
    return index;
}

/* Appends `index` to the input (0) or output (1) index file. */
EXPORT void dgad_py_index_to_file(int which, unsigned long long index)
{
    unsigned long long i = index;
    request(0, REQ_INDEX_TO_FILE, (unsigned long)which, P(&i), 0, 0, 0);
}

/* What `walk` does with each element. */
enum action { MARK_INPUT, MARK_OUTPUT, MAKE_PASSIVE, SET_DOT, GET_DOT };

/* The elements of an n-dimensional strided array, in C (row-major) order.
 * SET_DOT / GET_DOT read / write the dot values from / into the contiguous
 * buffer at *dots (one `kind`-byte value per element, the array's type),
 * advancing it. */
static void walk(char *base, int ndim, const long *shape, const long *strides,
                 int kind, enum action what, char **dots)
{
    if (ndim == 0) {
        switch (what) {
        case MARK_INPUT:
            dgad_py_input(base, kind);
            break;
        case MARK_OUTPUT:
            dgad_py_output(base, kind);
            break;
        case MAKE_PASSIVE:
            dgad_py_set_index(base, 0);
            break;
        case SET_DOT:
            request(0, REQ_SET_DOTVALUE, P(base), P(*dots), (unsigned long)kind, 0, 0);
            *dots += kind;
            break;
        case GET_DOT:
            request(0, REQ_GET_DOTVALUE, P(base), P(*dots), (unsigned long)kind, 0, 0);
            *dots += kind;
            break;
        }
        return;
    }
    for (long i = 0; i < shape[0]; i++)
        walk(base + i * strides[0], ndim - 1, shape + 1, strides + 1, kind, what, dots);
}

EXPORT void dgad_py_input_strided(char *base, int ndim, const long *shape,
                                  const long *strides, int kind)
{
    walk(base, ndim, shape, strides, kind, MARK_INPUT, NULL);
}

EXPORT void dgad_py_output_strided(char *base, int ndim, const long *shape,
                                   const long *strides, int kind)
{
    walk(base, ndim, shape, strides, kind, MARK_OUTPUT, NULL);
}

EXPORT void dgad_py_passive_strided(char *base, int ndim, const long *shape,
                                    const long *strides, int kind)
{
    walk(base, ndim, shape, strides, kind, MAKE_PASSIVE, NULL);
}

/* Forward mode on every element of a strided array, in C order: sets the
 * dot values from `dots` / reads them into `dots`, a contiguous buffer of
 * one `kind`-byte value per element (the array's element type: float,
 * double or x87 long double).  Outside forward mode nothing happens and
 * `dots` keeps what it holds. */
EXPORT void dgad_py_set_dot_strided(char *base, int ndim, const long *shape,
                                    const long *strides, int kind, const char *dots)
{
    char *cursor = (char *)dots;
    walk(base, ndim, shape, strides, kind, SET_DOT, &cursor);
}

EXPORT void dgad_py_get_dot_strided(char *base, int ndim, const long *shape,
                                    const long *strides, int kind, char *dots)
{
    char *cursor = dots;
    walk(base, ndim, shape, strides, kind, GET_DOT, &cursor);
}

/* Forward mode: set / get the dot value of the `size`-byte value at `addr`
 * from / into `dot`.  Outside forward mode (and natively) nothing happens
 * and `dot` keeps what it holds.  Returns the request's answer (1 when a
 * tool in forward mode handled it, else 0). */
EXPORT unsigned long dgad_py_set_dotvalue(void *addr, const void *dot, unsigned long size)
{
    return request(0, REQ_SET_DOTVALUE, P(addr), P(dot), size, 0, 0);
}

EXPORT unsigned long dgad_py_get_dotvalue(const void *addr, void *dot, unsigned long size)
{
    return request(0, REQ_GET_DOTVALUE, P(addr), P(dot), size, 0, 0);
}

/* The version of this interface, checked by the package when it loads a
 * library built earlier. */
EXPORT int dgad_py_abi_version(void)
{
    return 2;
}
