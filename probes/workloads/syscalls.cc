// Syscall family: the raw cost of entering the kernel (getpid), and its control, a clock
// read served by the vDSO without entering the kernel at all.
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "workloads/registry.h"

namespace isoprobe::workloads {

namespace {

void run_getpid(benchmark::State& state, const Env&) {
  for (auto _ : state) {
    long pid = ::syscall(SYS_getpid);  // raw: never a libc-cached value
    benchmark::DoNotOptimize(pid);
  }
}

void run_clock_gettime(benchmark::State& state, const Env&) {
  struct timespec ts {};
  for (auto _ : state) {
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    benchmark::DoNotOptimize(ts);
  }
}

}  // namespace

const Workload kGetpid{
    .name = "getpid",
    .family = "syscalls",
    .description = "one raw getpid system call (syscall(SYS_getpid)): the cost of entering the kernel",
    .run = run_getpid,
};

const Workload kClockGettime{
    .name = "clock_gettime",
    .family = "syscalls",
    .description = "one clock_gettime(CLOCK_MONOTONIC) through the vDSO: control, no kernel entry",
    .run = run_clock_gettime,
};

}  // namespace isoprobe::workloads
