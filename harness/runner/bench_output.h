// Reading `isoprobe bench` output (Google Benchmark's JSON): one time per operation per
// workload, in seconds. The output comes from inside a sandbox: everything is checked.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "harness/common/expected.h"

namespace isoharness::runner {

struct BenchRun {
  std::map<std::string, double> seconds_per_op;  // workload -> seconds per iteration
  std::map<std::string, std::string> skipped;    // workload -> reason
  // workload -> its user counters (e.g. "not_ready": EAGAIN waits of a round trip);
  // only finite numbers, at most 8 per workload, names of at most 32 characters.
  std::map<std::string, std::map<std::string, double>> counters;
};

// Workload name = benchmark name up to the first '/'. Aggregates (mean/median rows of
// repetitions) are ignored; with several iteration rows for one workload the last wins.
Expected<BenchRun> parse_bench_output(std::string_view json_text);

}  // namespace isoharness::runner
