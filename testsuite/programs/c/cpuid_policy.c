/* Prints the cpuid feature words code dispatches on (leaf 1, leaf 7
 * sub-leaves 0 and 1) as the program sees them. Natively: the CPU's.
 * Under dgad: the CPU's under DGAD_CPUID=native, and without AVX-512,
 * TSX, AMX, AVX10 and APX under the default (DGAD_CPUID=avx2). */
#include <cpuid.h>
#include <stdio.h>

static void show(unsigned leaf, unsigned sub)
{
    unsigned a, b, c, d;
    __cpuid_count(leaf, sub, a, b, c, d);
    if (leaf == 1)
        b &= 0x00ffffff; /* the APIC id of the CPU the thread runs on */
    printf("%u.%u eax=%08x ebx=%08x ecx=%08x edx=%08x\n", leaf, sub, a, b, c, d);
}

int main(void)
{
    unsigned max = __get_cpuid_max(0, 0);
    show(1, 0);
    if (max >= 7) {
        show(7, 0);
        show(7, 1);
    }
    printf("END cpuid_policy\n");
    return 0;
}
