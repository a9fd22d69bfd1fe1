/* How fast a value stored to memory comes back from it, by addressing
 * form: %gs-relative (how dgad's lookups spill rax/rcx into the thread
 * context and restore them at the target), %rsp-relative, %rip-relative,
 * and no memory at all. Each loop is one dependency chain (store, load,
 * add), so its time per iteration is the store-to-load latency plus one
 * add. Build and run: gcc -O2 -o /tmp/gs_forwarding
 * testsuite/benchmarks/gs_forwarding.c && /tmp/gs_forwarding */
#include <stdio.h>
#include <stdint.h>
#include <time.h>
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
static uint64_t area[64] __attribute__((aligned(64)));
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(){
  syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)area);
  long n=200000000; uint64_t x=0; double t;
  t=now();
  for(long i=0;i<n;i++){ __asm__ volatile("mov %%gs:8,%%rcx\n\t" "mov %0,%%gs:8\n\t" "mov %%gs:8,%0\n\t" "add $1,%0":"+r"(x)::"rcx","memory"); }
  printf("gs  chain: %.3f ns/iter\n",(now()-t)/n*1e9);
  t=now();
  for(long i=0;i<n;i++){ __asm__ volatile("mov %0,-200(%%rsp)\n\t" "mov -200(%%rsp),%0\n\t" "add $1,%0":"+r"(x)::"memory"); }
  printf("rsp chain: %.3f ns/iter\n",(now()-t)/n*1e9);
  t=now();
  for(long i=0;i<n;i++){ __asm__ volatile("mov %0,area+8(%%rip)\n\t" "mov area+8(%%rip),%0\n\t" "add $1,%0":"+r"(x)::"memory"); }
  printf("rip chain: %.3f ns/iter\n",(now()-t)/n*1e9);
  t=now();
  for(long i=0;i<n;i++){ __asm__ volatile("add $1,%0":"+r"(x)::"memory"); }
  printf("reg chain: %.3f ns/iter\n",(now()-t)/n*1e9);
  return x==1;
}
