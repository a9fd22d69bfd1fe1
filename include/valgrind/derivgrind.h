/*
 * <valgrind/derivgrind.h> for dgad -- Derivgrind-compatible client requests.
 *
 * Programs written for Derivgrind (https://github.com/SciCompKL/derivgrind)
 * compile unchanged against this header: compile with -I<dgad>/include and
 * keep `#include <valgrind/derivgrind.h>` (or "derivgrind.h" with
 * -I<dgad>/include/valgrind).  The request codes, argument orders and
 * instruction sequence are Derivgrind's, so binaries already built against
 * Derivgrind's own header run under dgad as well, and binaries built against
 * this header run under Derivgrind.
 *
 * Run natively (without libdgad.so or Valgrind), every request does nothing
 * and evaluates to its default, 0.
 *
 * Differences from Derivgrind's header, none of which change what a correct
 * program does:
 *   - self-contained: Valgrind's valgrind.h is not needed and not included
 *     (define DGAD_INCLUDE_VALGRIND_H before including this header to have
 *     <valgrind/valgrind.h> included, e.g. for RUNNING_ON_VALGRIND);
 *   - the macros use no static scratch variables (no `tbi`, and
 *     DG_INPUT/DG_OUTPUT keep their temporaries on the stack), so they are
 *     thread-safe and give no unused-variable warnings;
 *   - the results have type unsigned long, as Valgrind's
 *     VALGRIND_DO_CLIENT_REQUEST_EXPR.
 */
#ifndef __DERIVGRIND_H
#define __DERIVGRIND_H

/* Treat this header as a system header (no warnings from its own code under
 * the user's strict warning flags), unless DGAD_HEADER_WARNINGS is defined
 * (the self-test defines it). */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(DGAD_HEADER_WARNINGS)
#  pragma GCC system_header
#endif

#include "../dgad/request.h"

#if defined(DGAD_INCLUDE_VALGRIND_H)
#  include <valgrind/valgrind.h>
#endif

/* Request codes: VG_USERREQ_TOOL_BASE('D','G') = 0x44470000, then in order.
 * (Derivgrind: "DO NOT CHANGE THE ORDER OF THESE ENTRIES".) */
typedef enum {
    VG_USERREQ__GET_DOTVALUE = DGAD_REQ_GET_DOTVALUE,
    VG_USERREQ__SET_DOTVALUE = DGAD_REQ_SET_DOTVALUE,
    VG_USERREQ__DISABLE = DGAD_REQ_DISABLE,
    VG_USERREQ__GET_INDEX = DGAD_REQ_GET_INDEX,
    VG_USERREQ__SET_INDEX = DGAD_REQ_SET_INDEX,
    VG_USERREQ__NEW_INDEX = DGAD_REQ_NEW_INDEX,
    VG_USERREQ__NEW_INDEX_NOACTIVITYANALYSIS = DGAD_REQ_NEW_INDEX_NOACTIVITYANALYSIS,
    VG_USERREQ__INDEX_TO_FILE = DGAD_REQ_INDEX_TO_FILE,
    VG_USERREQ__GET_MODE = DGAD_REQ_GET_MODE,
    VG_USERREQ__GET_FLAGS = DGAD_REQ_GET_FLAGS,
    VG_USERREQ__SET_FLAGS = DGAD_REQ_SET_FLAGS
} Vg_DerivgrindClientRequest;

/* First argument of DG_INDEX_TO_FILE. */
typedef enum {
    DG_INDEXFILE_INPUT = DGAD_INDEXFILE_INPUT_,
    DG_INDEXFILE_OUTPUT = DGAD_INDEXFILE_OUTPUT_
} Dg_Indexfile;

/* Argument block of DG_NEW_INDEX / DG_NEW_INDEX_NOACTIVITYANALYSIS (same
 * layout as struct dgad_block_info_). */
typedef struct {
    void const *index1addr;   /* -> unsigned long long, index of operand 1   */
    void const *index2addr;   /* -> unsigned long long, index of operand 2   */
    void const *diff1addr;    /* -> double, partial w.r.t. operand 1         */
    void const *diff2addr;    /* -> double, partial w.r.t. operand 2         */
    void *newindexaddr;       /* -> unsigned long long, receives new index   */
    void const *valueaddr;    /* -> double, value of the result (diagnostics) */
} TapeBlockInfo;

/* Generic request with up to five word-sized arguments (pointers or
 * integers), evaluating to the tool's answer or to `dflt` natively. */
#define DGAD_DG_REQUEST_(dflt, req, a1, a2, a3, a4, a5)                      \
    dgad_client_request_((unsigned long)(dflt), (unsigned long)(req),        \
                         (unsigned long)(a1), (unsigned long)(a2),           \
                         (unsigned long)(a3), (unsigned long)(a4),           \
                         (unsigned long)(a5))

/* ----------------------------------------------------------------------
 * Forward (dot) mode
 * ---------------------------------------------------------------------- */

/* Copy the dot value of the variable at _qzz_addr into the variable of the
 * same type (size _qzz_size bytes) at _qzz_daddr.  Only in forward mode;
 * otherwise (and natively) *_qzz_daddr is left unchanged. */
#define DG_GET_DOTVALUE(_qzz_addr, _qzz_daddr, _qzz_size)                    \
    DGAD_DG_REQUEST_(0, VG_USERREQ__GET_DOTVALUE,                            \
                     (_qzz_addr), (_qzz_daddr),                              \
                     (_qzz_size), 0, 0)
#define DERIVGRIND_GET_DOTVALUE(_qzz_addr, _qzz_daddr, _qzz_size)            \
    DG_GET_DOTVALUE(_qzz_addr, _qzz_daddr, _qzz_size)
#define VALGRIND_GET_DERIVATIVE(_qzz_addr, _qzz_daddr, _qzz_size)            \
    DG_GET_DOTVALUE(_qzz_addr, _qzz_daddr, _qzz_size)

/* Set the dot value of the variable at _qzz_addr from the variable of the
 * same type (size _qzz_size bytes) at _qzz_daddr.  Only in forward mode. */
#define DG_SET_DOTVALUE(_qzz_addr, _qzz_daddr, _qzz_size)                    \
    DGAD_DG_REQUEST_(0, VG_USERREQ__SET_DOTVALUE,                            \
                     (_qzz_addr), (_qzz_daddr),                              \
                     (_qzz_size), 0, 0)
#define DERIVGRIND_SET_DOTVALUE(_qzz_addr, _qzz_daddr, _qzz_size)            \
    DG_SET_DOTVALUE(_qzz_addr, _qzz_daddr, _qzz_size)
#define VALGRIND_SET_DERIVATIVE(_qzz_addr, _qzz_daddr, _qzz_size)            \
    DG_SET_DOTVALUE(_qzz_addr, _qzz_daddr, _qzz_size)

/* Add _qzz_plus to and subtract _qzz_minus from the tool's "disable"
 * counter.  While it is non-zero, recording assigns index 0 instead of
 * writing blocks (and forward mode suppresses its diagnostics output).
 * Bracket code as DG_DISABLE(1,0); ... DG_DISABLE(0,1);. */
#define DG_DISABLE(_qzz_plus, _qzz_minus)                                    \
    DGAD_DG_REQUEST_(0, VG_USERREQ__DISABLE, (_qzz_plus), (_qzz_minus),      \
                     0, 0, 0)
#define DERIVGRIND_DISABLE(_qzz_plus, _qzz_minus) DG_DISABLE(_qzz_plus, _qzz_minus)

/* ----------------------------------------------------------------------
 * Recording mode
 * ---------------------------------------------------------------------- */

/* Store the 8-byte index of the variable at _qzz_addr at _qzz_iaddr.  Only in
 * recording mode; otherwise (and natively) *_qzz_iaddr is left unchanged. */
#define DG_GET_INDEX(_qzz_addr, _qzz_iaddr)                                  \
    DGAD_DG_REQUEST_(0, VG_USERREQ__GET_INDEX, (_qzz_addr),                  \
                     (_qzz_iaddr), 0, 0, 0)
#define DERIVGRIND_GET_INDEX(_qzz_addr, _qzz_iaddr) DG_GET_INDEX(_qzz_addr, _qzz_iaddr)

/* Give the variable at _qzz_addr the 8-byte index stored at _qzz_iaddr. */
#define DG_SET_INDEX(_qzz_addr, _qzz_iaddr)                                  \
    DGAD_DG_REQUEST_(0, VG_USERREQ__SET_INDEX, (_qzz_addr),                  \
                     (_qzz_iaddr), 0, 0, 0)
#define DERIVGRIND_SET_INDEX(_qzz_addr, _qzz_iaddr) DG_SET_INDEX(_qzz_addr, _qzz_iaddr)

/* Append a tape block, with activity analysis: the two operand indices are
 * read from _qzz_index1addr/_qzz_index2addr (8 bytes each), the partial
 * derivatives from _qzz_diff1addr/_qzz_diff2addr (double each), and the new
 * index is written to _qzz_newindexaddr -- 0 without a block if both operand
 * indices are 0.  _qzz_valueaddr points to the double value of the result. */
#define DG_NEW_INDEX(_qzz_index1addr, _qzz_index2addr, _qzz_diff1addr,       \
                     _qzz_diff2addr, _qzz_newindexaddr, _qzz_valueaddr)      \
    dgad_new_index_request_(VG_USERREQ__NEW_INDEX,                           \
                            (_qzz_index1addr), (_qzz_index2addr),            \
                            (_qzz_diff1addr), (_qzz_diff2addr),              \
                            (_qzz_newindexaddr), (_qzz_valueaddr))
#define DERIVGRIND_NEW_INDEX(_qzz_index1addr, _qzz_index2addr, _qzz_diff1addr, \
                             _qzz_diff2addr, _qzz_newindexaddr, _qzz_valueaddr) \
    DG_NEW_INDEX(_qzz_index1addr, _qzz_index2addr, _qzz_diff1addr,           \
                 _qzz_diff2addr, _qzz_newindexaddr, _qzz_valueaddr)

/* As DG_NEW_INDEX, but without activity analysis: always appends a block and
 * writes its (non-zero) index. */
#define DG_NEW_INDEX_NOACTIVITYANALYSIS(_qzz_index1addr, _qzz_index2addr,    \
                                        _qzz_diff1addr, _qzz_diff2addr,      \
                                        _qzz_newindexaddr, _qzz_valueaddr)   \
    dgad_new_index_request_(VG_USERREQ__NEW_INDEX_NOACTIVITYANALYSIS,        \
                            (_qzz_index1addr), (_qzz_index2addr),            \
                            (_qzz_diff1addr), (_qzz_diff2addr),              \
                            (_qzz_newindexaddr), (_qzz_valueaddr))
#define DERIVGRIND_NEW_INDEX_NOACTIVITYANALYSIS(_qzz_index1addr, _qzz_index2addr, \
        _qzz_diff1addr, _qzz_diff2addr, _qzz_newindexaddr, _qzz_valueaddr)   \
    DG_NEW_INDEX_NOACTIVITYANALYSIS(_qzz_index1addr, _qzz_index2addr,        \
        _qzz_diff1addr, _qzz_diff2addr, _qzz_newindexaddr, _qzz_valueaddr)

/* Append the 8-byte index stored at _qzz_indexaddr to the input index file
 * (_qzz_outputfile = DG_INDEXFILE_INPUT) or the output index file
 * (DG_INDEXFILE_OUTPUT). */
#define DG_INDEX_TO_FILE(_qzz_outputfile, _qzz_indexaddr)                    \
    DGAD_DG_REQUEST_(0, VG_USERREQ__INDEX_TO_FILE, (_qzz_outputfile),        \
                     (_qzz_indexaddr), 0, 0, 0)
#define DERIVGRIND_INDEX_TO_FILE(_qzz_outputfile, _qzz_addrindex)            \
    DG_INDEX_TO_FILE(_qzz_outputfile, _qzz_addrindex)

/* ----------------------------------------------------------------------
 * Bit-trick finder (Derivgrind's --trick mode; dgad has none)
 * ---------------------------------------------------------------------- */

/* Read the activity (A) and discreteness (D) flags of _qzz_size bytes at
 * _qzz_addr into the buffers at _qzz_Aaddr and _qzz_Daddr. */
#define DG_GET_FLAGS(_qzz_addr, _qzz_Aaddr, _qzz_Daddr, _qzz_size)           \
    DGAD_DG_REQUEST_(0, VG_USERREQ__GET_FLAGS, (_qzz_addr),                  \
                     (_qzz_Aaddr), (_qzz_Daddr),                             \
                     (_qzz_size), 0)

/* Set the flags of _qzz_size bytes at _qzz_addr from the two buffers. */
#define DG_SET_FLAGS(_qzz_addr, _qzz_Aaddr, _qzz_Daddr, _qzz_size)           \
    DGAD_DG_REQUEST_(0, VG_USERREQ__SET_FLAGS, (_qzz_addr),                  \
                     (_qzz_Aaddr), (_qzz_Daddr),                             \
                     (_qzz_size), 0)

/* Flag a variable as floating-point data for the bit-trick finder (used by
 * Derivgrind's trick tests under `DG_GET_MODE == 't'`). */
#define DG_MARK_FLOAT(var)                                                   \
    ((void)dgad_mark_float_(&(var), (unsigned long)sizeof(var)))

/* ----------------------------------------------------------------------
 * Mode
 * ---------------------------------------------------------------------- */

/* The tool's mode: 'd' (forward/dot mode), 'b' (recording mode), 't'
 * (Derivgrind's bit-trick finder); 0 natively.  An object-like macro, as in
 * Derivgrind: write `char mode = DG_GET_MODE;`. */
#define DG_GET_MODE                                                          \
    DGAD_DG_REQUEST_(0, VG_USERREQ__GET_MODE, 0, 0, 0, 0, 0)
#define DERIVGRIND_GET_MODE DG_GET_MODE

#include "derivgrind-recording.h"

#endif /* __DERIVGRIND_H */
