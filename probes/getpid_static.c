/* The independent getpid measurement: a static program with no dependencies that calls
 * the raw getpid system call in batches of 1,000 until at least the given number of
 * milliseconds (default 200, at most 10,000) have passed, or 10^8 calls, and prints
 * "<ns per call> <calls>". `isoharness parity` runs it in every cell next to
 * `isoprobe bench --workloads getpid`; bench/workloads_getpid_crosscheck runs it
 * directly under each runtime. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  long budget_ms = 200;
  if (argc > 1) {
    char* end = NULL;
    budget_ms = strtol(argv[1], &end, 10);
    if (*end != '\0' || budget_ms < 1 || budget_ms > 10000) {
      fprintf(stderr, "usage: getpid_static [MILLISECONDS 1..10000]\n");
      return 2;
    }
  }
  for (int i = 0; i < 1000; ++i) syscall(SYS_getpid); /* warm-up */
  const double budget = (double)budget_ms * 1e6;
  long calls = 0;
  double start = now_ns();
  double elapsed = 0;
  while (elapsed < budget && calls < 100000000L) {
    for (int i = 0; i < 1000; ++i) syscall(SYS_getpid);
    calls += 1000;
    elapsed = now_ns() - start;
  }
  printf("%.2f %ld\n", elapsed / (double)calls, calls);
  return 0;
}
