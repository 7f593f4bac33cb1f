// `isoprobe bench` output (Google Benchmark JSON) as the runner reads it: it comes from
// inside the sandbox, so every value is checked; what is accepted must be finite.
#include <cmath>

#include "harness/runner/bench_output.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto run = isoharness::runner::parse_bench_output(isoharness::fuzz::as_text(data, size));
  if (!run) return 0;
  for (const auto& [name, seconds] : run->seconds_per_op) {
    if (!std::isfinite(seconds) || seconds < 0) __builtin_trap();
  }
  for (const auto& [name, counters] : run->counters) {
    if (counters.size() > 8) __builtin_trap();
    for (const auto& [counter, value] : counters) {
      if (counter.size() > 32 || !std::isfinite(value)) __builtin_trap();
    }
  }
  return 0;
}
