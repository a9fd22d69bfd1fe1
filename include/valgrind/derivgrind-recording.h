/*
 * <valgrind/derivgrind-recording.h> for dgad -- Derivgrind's helper macros
 * for marking AD inputs and outputs in recording mode.  Included by
 * <valgrind/derivgrind.h>; may also be included on its own.
 *
 * `var` must be an lvalue of a floating-point type (float, double or long
 * double; any other type convertible to double is accepted).  A value of any
 * width carries one 8-byte index, attached to its address.
 *
 * Run natively, the macros do nothing and DG_INPUT/DG_OUTPUT evaluate to 0.
 */
#ifndef DERIVGRIND_RECORDING_H
#define DERIVGRIND_RECORDING_H

/* Treat this header as a system header (no warnings from its own code under
 * the user's strict warning flags), unless DGAD_HEADER_WARNINGS is defined
 * (the self-test defines it). */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(DGAD_HEADER_WARNINGS)
#  pragma GCC system_header
#endif

#include "derivgrind.h"

/* Derivgrind declares these scratch variables in its header.  The macros
 * below do not use them (their temporaries live on the stack), but code that
 * refers to them, e.g. DG_NEW_INDEX(&dg_zero, ..., &dg_one, ...), still
 * compiles. */
static unsigned long long dg_indextmp DGAD_UNUSED_, dg_indextmp2 DGAD_UNUSED_;
static double dg_valtmp DGAD_UNUSED_;
static unsigned long long const dg_zero DGAD_UNUSED_ = 0;
static double const dg_one DGAD_UNUSED_ = 1.;

/* Mark `var` as an AD input: append a block without operands and give `var`
 * its index.  Evaluates to the new index (unsigned long long), e.g.
 *     printf("a index = %llu\n", DG_INPUT(a));                              */
#define DG_INPUT(var) dgad_mark_input_(&(var), (double)(var), 0)

/* As DG_INPUT, and append the index to the input index file.  A compound
 * statement, as in Derivgrind. */
#define DG_INPUTF(var) { (void)dgad_mark_input_(&(var), (double)(var), 1); }

/* Mark `var` as an AD output: append a block whose only operand is the index
 * of `var`, with partial derivative 1.  Evaluates to the block's index. */
#define DG_OUTPUT(var) dgad_mark_output_(&(var), (double)(var), 0)

/* As DG_OUTPUT, and append the index to the output index file. */
#define DG_OUTPUTF(var) { (void)dgad_mark_output_(&(var), (double)(var), 1); }

/* Early Derivgrind versions truncated the index files here; the files are now
 * created by the tool when recording starts, so this does nothing. */
#define DG_CLEARF { }

#endif /* DERIVGRIND_RECORDING_H */
