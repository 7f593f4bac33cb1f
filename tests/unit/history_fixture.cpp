#include "tests/unit/history_fixture.h"

#include <cmath>
#include <cstdio>
#include <random>

namespace isoharness::test {

std::vector<double> synthetic_log_ratios(const NightPlan& plan) {
  std::mt19937_64 rng(plan.seed);
  std::normal_distribution<double> noise(0.0, plan.noise);
  std::vector<double> out;
  for (int i = 0; i < plan.nights; ++i) {
    double v = std::log(plan.level) + noise(rng);
    if (plan.step_at >= 0 && i >= plan.step_at) v += std::log(plan.step);
    out.push_back(v);
  }
  return out;
}

std::string night_id(int night) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "n%02d", night);
  return buf;
}

std::string night_started(int night) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "2026-%02d-%02dT02:00:00Z", 10 + night / 28, 1 + night % 28);
  return buf;
}

nlohmann::json parity_night(int night, double ratio, const std::string& runsc) {
  const nlohmann::json interval = {{"estimate", ratio}, {"low", ratio * 0.97}, {"high", ratio * 1.03}};
  const nlohmann::json comparison = {{"workload", "cpu_hash"},
                                     {"ratio", interval},
                                     {"baseline_median", 2e-3},
                                     {"candidate_median", 2e-3 * ratio},
                                     {"verdict", ratio < 1.07 ? "parity" : "inconclusive"},
                                     {"tolerance", 1.10}};
  const nlohmann::json cell = {
      {"name", "gvisor/tier"},
      {"comparisons", {comparison}},
      {"mix",
       {{"slowdown", interval}, {"verdict", ratio < 1.07 ? "parity" : "inconclusive"}, {"tolerance", 1.10}}}};
  return {
      {"schema", "isoharness.result/v1"},
      {"context",
       {{"started", night_started(night)},
        {"git_revision", "abc123"},
        {"host", "ci-1"},
        {"kernel", "Linux 6.1.0"},
        {"runc", "runc version 1.1.5"},
        {"runsc", runsc},
        {"runsc_platform", "ptrace"},
        {"deployment", "deploy/ci.yaml"}}},
      {"run", {{"id", night_id(night)}}},
      {"parity",
       {{"schema", "isoharness.parity/v1"},
        {"scenario", "parity"},
        {"baseline", "runc/tier"},
        {"tolerance", 1.10},
        {"cells", {cell}},
        {"samples",
         {{"runc/tier", {{"cpu_hash", {2e-3, 2e-3}}}}, {"gvisor/tier", {{"cpu_hash", {2e-3 * ratio}}}}}}}},
      {"summary", {{"verdict", "pass"}}}};
}

}  // namespace isoharness::test
