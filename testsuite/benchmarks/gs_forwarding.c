/* How fast a value stored to memory comes back from it, by addressing
 * form: %gs-relative without a base register (how dgad's lookups spilled
 * rax/rcx into the thread context until decision 24, and how record
 * mode's inline code still reaches register shadows), %gs-relative with
 * a base register (holding 0), base + displacement, an absolute address
 * (no base, no segment), %rsp-relative, and the mixed %gs pairs (which
 * side lacks the base register). Each loop is one dependency
 * chain (store, load, add), so its time per iteration is the
 * store-to-load latency plus one add. Build and run:
 *   gcc -O2 -o /tmp/gs_forwarding testsuite/benchmarks/gs_forwarding.c
 *   /tmp/gs_forwarding */
#include <stdio.h>
#include <stdint.h>
#include <time.h>
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <unistd.h>
static uint64_t area[64] __attribute__((aligned(64)));
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(){
  syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)area);
  void *low = mmap((void*)0x10000000, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_FIXED, -1, 0);
  long n=200000000; uint64_t x=0; double t; uint64_t *base = area; uint64_t zero = 0;
  t=now();
  for(long i=0;i<n;i++){ __asm__ volatile("mov %0,%%gs:8\n\t" "mov %%gs:8,%0\n\t" "add $1,%0":"+r"(x)::"memory"); }
  printf("gs:[disp]      %.3f ns\n",(now()-t)/n*1e9);
  t=now();
  for(long i=0;i<n;i++){ __asm__ volatile("mov %0,%%gs:8(%1)\n\t" "mov %%gs:8(%1),%0\n\t" "add $1,%0":"+r"(x):"r"(zero):"memory"); }
  printf("gs:[reg+disp]  %.3f ns\n",(now()-t)/n*1e9);
  t=now();
  for(long i=0;i<n;i++){ __asm__ volatile("mov %0,8(%1)\n\t" "mov 8(%1),%0\n\t" "add $1,%0":"+r"(x):"r"(base):"memory"); }
  printf("[reg+disp]     %.3f ns\n",(now()-t)/n*1e9);
  t=now();
  for(long i=0;i<n;i++){ __asm__ volatile("mov %0,0x10000008\n\t" "mov 0x10000008,%0\n\t" "add $1,%0":"+r"(x)::"memory"); }
  printf("[abs disp32]   %.3f ns\n",(now()-t)/n*1e9);
  t=now();
  for(long i=0;i<n;i++){ __asm__ volatile("mov %0,-200(%%rsp)\n\t" "mov -200(%%rsp),%0\n\t" "add $1,%0":"+r"(x)::"memory"); }
  printf("[rsp+disp]     %.3f ns\n",(now()-t)/n*1e9);
  t=now();
  for(long i=0;i<n;i++){ __asm__ volatile("mov %0,%%gs:8\n\t" "mov %%gs:8(%1),%0\n\t" "add $1,%0":"+r"(x):"r"(zero):"memory"); }
  printf("gs:[disp] store, gs:[reg+disp] load  %.3f ns\n",(now()-t)/n*1e9);
  t=now();
  for(long i=0;i<n;i++){ __asm__ volatile("mov %0,%%gs:8(%1)\n\t" "mov %%gs:8,%0\n\t" "add $1,%0":"+r"(x):"r"(zero):"memory"); }
  printf("gs:[reg+disp] store, gs:[disp] load  %.3f ns\n",(now()-t)/n*1e9);
  return (x==1) + (low==0);
}
