// A timing workload is data: a descriptor with a stable name, what it measures, a check
// that says why it cannot run here (or nothing), and the Google Benchmark function.
//
// Every workload measures ONE operation per benchmark iteration (one getpid, one round
// trip, one compile …), timed as wall-clock time, so the per-iteration `real_time` in
// Google Benchmark's JSON is the figure the harness compares across runtimes. Setup and
// teardown happen outside the timed loop. A failure during setup is reported through
// state.SkipWithError("error: …"), never a crash; a workload whose `check` finds the
// image lacking something is reported as "skipped: <reason>".
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace isoprobe::workloads {

// What a workload may rely on while it runs.
struct Env {
  std::string scratch;  // absolute path of a private, writable directory for this run
};

// Returns the reason the workload cannot run in this image, or nothing when it can.
using CheckFn = std::optional<std::string> (*)(const Env&);
using RunFn = void (*)(benchmark::State&, const Env&);

struct Workload {
  std::string_view name;         // stable, lower_snake_case; the benchmark's name
  std::string_view family;       // the file it lives in: syscalls, files, processes, …
  std::string_view description;  // what one iteration does
  CheckFn check = nullptr;       // nullptr: always available
  RunFn run = nullptr;
  // 0: Google Benchmark picks the count from the minimum time. Otherwise a fixed count,
  // the hard cap for slow workloads that start external programs.
  std::int64_t fixed_iterations = 0;
};

// Reports a setup failure (errno text included) without crashing the run.
void fail_with_errno(benchmark::State& state, std::string_view what);
void fail_with(benchmark::State& state, std::string_view message);

}  // namespace isoprobe::workloads
