/* Disassembly probe for selftest.sh: DG_INPUTF on a double must compile to
 * four client requests (dgad's MARK_INPUT, then Derivgrind's
 * NEW_INDEX_NOACTIVITYANALYSIS, SET_INDEX, INDEX_TO_FILE for a tool that
 * does not answer it), each the exact 5-instruction sequence with %rax
 * pointing to the request block. */
#include <valgrind/derivgrind.h>

void dgad_probe_inputf(double *x);
void dgad_probe_inputf(double *x)
{
    DG_INPUTF(*x);
}
