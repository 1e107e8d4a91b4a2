// LD_PRELOAD'ed by notes/aoti_diag.py: prints a native backtrace on SIGSEGV (the H200 image has no gdb).
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
static void h(int sig, siginfo_t* si, void* uc) {
  void* bt[64]; int n = backtrace(bt, 64);
  const char m[] = "\n=== native backtrace (SIGSEGV) ===\n"; write(2, m, sizeof m - 1);
  backtrace_symbols_fd(bt, n, 2);
  signal(sig, SIG_DFL); raise(sig);
}
__attribute__((constructor)) static void init(void) {
  struct sigaction sa; memset(&sa, 0, sizeof sa); sa.sa_sigaction = h; sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, 0);
}
