/* Instructions the engine cannot run for the program must stop it with a
 * diagnostic naming the instruction, never run wrongly or silently.
 * Usage: unsupported int80 | wrgsbase
 *   int80: a 32-bit system call (int $0x80, getpid), which dgad does not
 *          emulate;
 *   wrgsbase: setting the %gs base, which holds dgad's thread context (an
 *          older dgad let it through and crashed in its next lookup). */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    if (strcmp(argv[1], "int80") == 0) {
        long pid;
        __asm__ volatile("int $0x80" : "=a"(pid) : "a"(20L) : "memory");
        printf("int 0x80 getpid: %d\n", pid > 0);
    } else if (strcmp(argv[1], "wrgsbase") == 0) {
        unsigned long base = 0x1234000, back = 0;
        __asm__ volatile("wrgsbase %1\n rdgsbase %0\n xor %%eax, %%eax\n wrgsbase %%rax"
                         : "=r"(back)
                         : "r"(base)
                         : "rax");
        printf("gs base written and read back: %d\n", back == base);
    } else {
        return 2;
    }
    return 0;
}
