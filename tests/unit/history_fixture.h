// Synthetic nightly series for the history tests: parity result documents whose ratios
// follow a known truth (a step of a given size at a given night, log-normal noise), and
// the drift document of such a series with a runtime upgrade at the step.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace isoharness::test {

struct NightPlan {
  int nights = 12;
  int step_at = -1;     // first night of the new level; -1 = no step
  double step = 1.0;    // factor applied from step_at on
  double noise = 0.02;  // sd of the log ratio
  std::uint64_t seed = 1;
  double level = 1.03;  // the mix ratio before the step
};

// log(ratio) of each night: log(level) (+ log(step) from step_at) + N(0, noise).
std::vector<double> synthetic_log_ratios(const NightPlan& plan);

// A parity result document for night `night` ("n01", started 2026-11-01T02:00:00Z + night
// days) whose cell gvisor/tier has one workload (cpu_hash) and a mix, both at `ratio`.
// `runsc` goes into the context block.
nlohmann::json parity_night(int night, double ratio, const std::string& runsc);

// Run ids and dates as parity_night makes them.
std::string night_id(int night);
std::string night_started(int night);

}  // namespace isoharness::test
