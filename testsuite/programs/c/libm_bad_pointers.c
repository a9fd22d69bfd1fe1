/* libm functions given output pointers the program cannot write (NULL-ish,
 * a read-only page): natively the function's store faults and the
 * program's SIGSEGV handler gets the pointer as si_addr; without a
 * handler the process dies of SIGSEGV ("die"). Under record mode the
 * runtime answers libm natively, and the store faulted inside the runtime
 * (internal error, exit 125); it now checks the pointers first and raises
 * the SIGSEGV for the program. float, double and long double variants. */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
static sigjmp_buf env;
static volatile void *fault_addr;
static void h(int s, siginfo_t *si, void *uc){ fault_addr = si->si_addr; siglongjmp(env, 1); }
#define TRY(name, call) do { fault_addr = 0; if (!sigsetjmp(env, 1)) { call; printf(name ": returned\n"); } \
  else printf(name ": SIGSEGV at %s\n", fault_addr == (void*)bad ? "the pointer" : fault_addr == (void*)ro ? "the read-only page" : "elsewhere"); } while (0)
int main(int argc, char **argv){
  volatile double x = 0.75; volatile float xf = 0.75f; volatile long double xl = 0.75L;
  volatile uintptr_t bad_address = 16; /* volatile: no compile-time bounds reasoning */
  uintptr_t bad = bad_address;
  char *ro = mmap(0, 4096, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
  if (argc > 1 && !strcmp(argv[1], "die")) { printf("about to die\n"); fflush(stdout); frexp(x, (int*)bad); printf("survived\n"); return 0; }
  struct sigaction sa = {.sa_sigaction = h, .sa_flags = SA_SIGINFO}; sigaction(SIGSEGV, &sa, 0);
  double d, c; float cf; long double l; int e;
  TRY("frexp", frexp(x, (int*)bad));
  TRY("frexpf", frexpf(xf, (int*)ro));
  TRY("frexpl", frexpl(xl, (int*)bad));
  TRY("modf", modf(x, (double*)ro));
  TRY("modff", modff(xf, (float*)bad));
  TRY("modfl", modfl(xl, (long double*)ro));
  TRY("sincos", sincos(x, &d, (double*)bad));
  TRY("sincosf", sincosf(xf, (float*)ro, &cf));
  TRY("sincosl", sincosl(xl, &l, (long double*)bad));
  TRY("remquo", remquo(x, 0.5, (int*)bad));
  TRY("lgamma_r", lgamma_r(x, (int*)ro));
  TRY("lgammal_r", lgammal_r(xl, (int*)bad));
  /* and the good calls still work afterwards */
  double m = frexp(x, &e); long double ml = modfl(2.5L, &l);
  sincos(x, &d, &c);
  printf("frexp(0.75) = %g * 2^%d, modfl(2.5) = %Lg + %Lg, sincos = %.17g %.17g\n", m, e, ml, l, d, c);
  printf("END libm_bad_pointers\n");
  return 0;
}
