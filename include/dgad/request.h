/*
 * dgad/request.h -- the client-request primitive shared by <dgad.h> and
 * <valgrind/derivgrind.h>.
 *
 * A client request is a short instruction sequence that does nothing on a
 * real CPU but is recognised by the dgad runtime (libdgad.so) while it
 * translates the program, and by Valgrind tools.  On amd64 it is
 *
 *     rol  $3,  %rdi          48 c1 c7 03
 *     rol  $13, %rdi          48 c1 c7 0d
 *     rol  $61, %rdi          48 c1 c7 3d
 *     rol  $51, %rdi          48 c1 c7 33     (3+13+61+51 = 128: rdi unchanged)
 *     xchg %rbx, %rbx         48 87 db
 *
 * with %rax pointing to six 64-bit words {request, arg1, ..., arg5} and %rdx
 * holding the default result.  The runtime leaves the request's result in
 * %rdx; on a real CPU (no tool) %rdx keeps the default.  The rotations change
 * the flags, hence the "cc" clobber; the tool may read and write any memory
 * the arguments point to, hence the "memory" clobber.
 *
 * Nothing here needs Valgrind's valgrind.h, and no symbol is emitted: all
 * functions are static inline.  Defining NVALGRIND or DGAD_NO_CLIENT_REQUESTS
 * (as with Valgrind's valgrind.h) compiles every request to "return the
 * default".  On targets other than GCC/Clang on x86-64 the requests are
 * likewise plain "return the default".
 *
 * This header is for use by <dgad.h> and <valgrind/derivgrind.h>; programs
 * normally include one of those instead.
 */
#ifndef DGAD_REQUEST_H
#define DGAD_REQUEST_H

/* Treat this header as a system header (no warnings from its own code under
 * the user's strict warning flags), unless DGAD_HEADER_WARNINGS is defined
 * (the self-test defines it). */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(DGAD_HEADER_WARNINGS)
#  pragma GCC system_header
#endif

#if defined(__GNUC__) || defined(__clang__)
#  define DGAD_INLINE_ static __inline__ __attribute__((__unused__))
#  define DGAD_UNUSED_ __attribute__((__unused__))
#elif defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L)
#  define DGAD_INLINE_ static inline
#  define DGAD_UNUSED_
#else
#  define DGAD_INLINE_ static
#  define DGAD_UNUSED_
#endif

#if !defined(NVALGRIND) && !defined(DGAD_NO_CLIENT_REQUESTS) \
    && (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#  define DGAD_HAVE_CLIENT_REQUESTS 1
#else
#  define DGAD_HAVE_CLIENT_REQUESTS 0
#endif

/* Request codes.  The base is Valgrind's tool base for the tool letters
 * 'D','G': ('D' << 24) | ('G' << 16) = 0x44470000; the codes follow in
 * Derivgrind's order (derivgrind.h, enum Vg_DerivgrindClientRequest).  Never
 * reorder: this is an ABI shared with binaries built against Derivgrind. */
#define DGAD_REQ_BASE_ 0x44470000UL
enum dgad_request_code {
    DGAD_REQ_GET_DOTVALUE = 0x44470000,              /* (addr, dot_addr, size)            */
    DGAD_REQ_SET_DOTVALUE = 0x44470001,              /* (addr, dot_addr, size)            */
    DGAD_REQ_DISABLE = 0x44470002,                   /* (plus, minus)                     */
    DGAD_REQ_GET_INDEX = 0x44470003,                 /* (addr, index_addr)                */
    DGAD_REQ_SET_INDEX = 0x44470004,                 /* (addr, index_addr)                */
    DGAD_REQ_NEW_INDEX = 0x44470005,                 /* (info)                            */
    DGAD_REQ_NEW_INDEX_NOACTIVITYANALYSIS = 0x44470006, /* (info)                         */
    DGAD_REQ_INDEX_TO_FILE = 0x44470007,             /* (which, index_addr)               */
    DGAD_REQ_GET_MODE = 0x44470008,                  /* ()                                */
    DGAD_REQ_GET_FLAGS = 0x44470009,                 /* (addr, A_addr, D_addr, size)      */
    DGAD_REQ_SET_FLAGS = 0x4447000a,                 /* (addr, A_addr, D_addr, size)      */
    /* dgad's own, after a gap: one request for what the three of an input
     * or output mark do (see dgad_mark_input_ below).  Derivgrind does not
     * know them. */
    DGAD_REQ_MARK_INPUT = 0x44470100,                /* (addr, value bits, to_file, index_addr) */
    DGAD_REQ_MARK_OUTPUT = 0x44470101                /* (addr, value bits, to_file, index_addr) */
};

/* Which index file DGAD_REQ_INDEX_TO_FILE appends to. */
#define DGAD_INDEXFILE_INPUT_ 0
#define DGAD_INDEXFILE_OUTPUT_ 1

/* Argument block of DGAD_REQ_NEW_INDEX[_NOACTIVITYANALYSIS]: six pointers,
 * laid out exactly like Derivgrind's TapeBlockInfo. */
struct dgad_block_info_ {
    const void *index1;    /* -> u64 index of the first operand              */
    const void *index2;    /* -> u64 index of the second operand             */
    const void *partial1;  /* -> double partial w.r.t. the first operand     */
    const void *partial2;  /* -> double partial w.r.t. the second operand    */
    void *new_index;       /* -> u64 receiving the index of the new block    */
    const void *value;     /* -> double value of the result (diagnostics)    */
};

/* Issue one client request.  Returns the tool's answer, or `dflt` when the
 * program is not running under dgad/Derivgrind. */
DGAD_INLINE_ unsigned long
dgad_client_request_(unsigned long dflt, unsigned long request,
                     unsigned long a1, unsigned long a2, unsigned long a3,
                     unsigned long a4, unsigned long a5)
{
#if DGAD_HAVE_CLIENT_REQUESTS
    unsigned long block[6];
    unsigned long result = dflt;
    block[0] = request;
    block[1] = a1;
    block[2] = a2;
    block[3] = a3;
    block[4] = a4;
    block[5] = a5;
    __asm__ __volatile__(
        "rolq $3, %%rdi\n\t"
        "rolq $13, %%rdi\n\t"
        "rolq $61, %%rdi\n\t"
        "rolq $51, %%rdi\n\t"
        "xchgq %%rbx, %%rbx"
        : "+d"(result)
        : "a"(&block[0])
        : "cc", "memory");
    return result;
#else
    (void)request; (void)a1; (void)a2; (void)a3; (void)a4; (void)a5;
    return dflt;
#endif
}

/* Pointer -> request word, without qualifier warnings. */
#define DGAD_PTR_(p) ((unsigned long)(const volatile void *)(p))

/* NEW_INDEX / NEW_INDEX_NOACTIVITYANALYSIS with the six pointers. */
DGAD_INLINE_ unsigned long
dgad_new_index_request_(unsigned long request,
                        const void *index1, const void *index2,
                        const void *partial1, const void *partial2,
                        void *new_index, const void *value)
{
    struct dgad_block_info_ info;
    info.index1 = index1;
    info.index2 = index2;
    info.partial1 = partial1;
    info.partial2 = partial2;
    info.new_index = new_index;
    info.value = value;
    return dgad_client_request_(0, request, DGAD_PTR_(&info), 0, 0, 0, 0);
}

/* An index that no tape reaches: what a mark's index variable holds until
 * dgad's one-request mark (DGAD_REQ_MARK_INPUT/OUTPUT) answers.  A tool
 * that does not know that request (Derivgrind, an older dgad, none at all)
 * leaves it there, and the mark is made with Derivgrind's three requests
 * instead, as are all later marks of this source file.  Define
 * DGAD_THREE_REQUEST_MARKS to use the three requests always (Derivgrind
 * prints "Unhandled user request." once per source file otherwise). */
#define DGAD_MARK_UNANSWERED_ 0xffffffffffffffffULL

/* Tries `request` (DGAD_REQ_MARK_INPUT or _OUTPUT) for the value at `addr`;
 * true with the mark's index in *index when a tool answered it.  Its
 * static (a function's, so that a source file without marks gets no data
 * from this header) says whether this source file's marks still try the
 * one request: cleared at the first that was not answered. */
DGAD_INLINE_ int
dgad_mark_one_request_(unsigned long request, const volatile void *addr,
                       double value, int to_file, unsigned long long *index)
{
#ifdef DGAD_THREE_REQUEST_MARKS
    (void)request; (void)addr; (void)value; (void)to_file; (void)index;
    return 0;
#else
    static int unanswered;
    union { double d; unsigned long u; } bits;
    if (unanswered)
        return 0;
    bits.d = value;
    *index = DGAD_MARK_UNANSWERED_;
    dgad_client_request_(0, request, DGAD_PTR_(addr), bits.u,
                         (unsigned long)(to_file != 0), DGAD_PTR_(index), 0);
    if (*index != DGAD_MARK_UNANSWERED_)
        return 1;
    unanswered = 1;
    return 0;
#endif
}

/* Mark the floating-point value at `addr` as an AD input: new tape block
 * without operands, its index attached to the value at `addr`.  `value` is
 * only passed on for diagnostics.  Returns the new index (0 natively).  With
 * `to_file`, the index is also appended to the input index file.  Under
 * dgad this is one client request; elsewhere Derivgrind's three
 * (NEW_INDEX_NOACTIVITYANALYSIS, SET_INDEX, INDEX_TO_FILE), which dgad
 * answers the same way. */
DGAD_INLINE_ unsigned long long
dgad_mark_input_(const volatile void *addr, double value, int to_file)
{
    static const unsigned long long zero_index = 0;
    static const double zero_partial = 0.0;
    unsigned long long index = 0;
    double v = value;
    if (dgad_mark_one_request_(DGAD_REQ_MARK_INPUT, addr, value, to_file, &index))
        return index;
    index = 0;
    dgad_new_index_request_(DGAD_REQ_NEW_INDEX_NOACTIVITYANALYSIS,
                            &zero_index, &zero_index,
                            &zero_partial, &zero_partial, &index, &v);
    dgad_client_request_(0, DGAD_REQ_SET_INDEX, DGAD_PTR_(addr),
                         DGAD_PTR_(&index), 0, 0, 0);
    if (to_file)
        dgad_client_request_(0, DGAD_REQ_INDEX_TO_FILE, DGAD_INDEXFILE_INPUT_,
                             DGAD_PTR_(&index), 0, 0, 0);
    return index;
}

/* Mark the floating-point value at `addr` as an AD output: a new tape block
 * with the value's index as its only operand and partial 1.0, so that the
 * output has an index of its own even if the same value is output twice or
 * is an input itself.  Returns that index (0 natively).  With `to_file`, the
 * index is also appended to the output index file.  One request under dgad,
 * else Derivgrind's three (GET_INDEX, NEW_INDEX_NOACTIVITYANALYSIS,
 * INDEX_TO_FILE). */
DGAD_INLINE_ unsigned long long
dgad_mark_output_(const volatile void *addr, double value, int to_file)
{
    static const unsigned long long zero_index = 0;
    static const double zero_partial = 0.0;
    static const double one_partial = 1.0;
    unsigned long long value_index = 0;
    unsigned long long index = 0;
    double v = value;
    if (dgad_mark_one_request_(DGAD_REQ_MARK_OUTPUT, addr, value, to_file, &index))
        return index;
    index = 0;
    dgad_client_request_(0, DGAD_REQ_GET_INDEX, DGAD_PTR_(addr),
                         DGAD_PTR_(&value_index), 0, 0, 0);
    dgad_new_index_request_(DGAD_REQ_NEW_INDEX_NOACTIVITYANALYSIS,
                            &value_index, &zero_index,
                            &one_partial, &zero_partial, &index, &v);
    if (to_file)
        dgad_client_request_(0, DGAD_REQ_INDEX_TO_FILE, DGAD_INDEXFILE_OUTPUT_,
                             DGAD_PTR_(&index), 0, 0, 0);
    return index;
}

/* Bit-trick finder: flag `size` bytes at `addr` as a floating-point value
 * (all activity bits set, no discreteness bits).  dgad has no bit-trick mode
 * and ignores the request; it exists for DG_MARK_FLOAT source compatibility. */
DGAD_INLINE_ unsigned long
dgad_mark_float_(const volatile void *addr, unsigned long size)
{
    unsigned char active[32];
    unsigned char discrete[32];
    unsigned long i;
    if (size > sizeof active)
        size = sizeof active;
    for (i = 0; i < size; i++) {
        active[i] = 0xff;
        discrete[i] = 0;
    }
    return dgad_client_request_(0, DGAD_REQ_SET_FLAGS, DGAD_PTR_(addr),
                                DGAD_PTR_(active), DGAD_PTR_(discrete),
                                size, 0);
}

#endif /* DGAD_REQUEST_H */
