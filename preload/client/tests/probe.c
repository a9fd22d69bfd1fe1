/* Disassembly probe for selftest.sh: DG_INPUTF on a double must compile to
 * three client requests (NEW_INDEX_NOACTIVITYANALYSIS, SET_INDEX,
 * INDEX_TO_FILE), each the exact 5-instruction sequence with %rax pointing
 * to the request block. */
#include <valgrind/derivgrind.h>

void dgad_probe_inputf(double *x);
void dgad_probe_inputf(double *x)
{
    DG_INPUTF(*x);
}
