// analyse() builds the parity section of the result document; to_json() writes the
// statistics types. The section's schema is documented in reports/README.md.
#include <fmt/format.h>

#include "harness/common/error.h"
#include "harness/parity/parity.h"

namespace isoharness::parity {

nlohmann::json to_json(const Interval& interval) {
  return {{"estimate", interval.estimate}, {"low", interval.low}, {"high", interval.high}};
}

nlohmann::json to_json(const WorkloadComparison& c) {
  nlohmann::json j = {{"workload", c.workload},
                      {"n_baseline", c.n_baseline},
                      {"n_candidate", c.n_candidate},
                      {"ratio", to_json(c.ratio)},
                      {"confidence", c.confidence},
                      {"achieved_confidence", c.achieved_confidence},
                      {"ci_method", c.ci_method},
                      {"p_value", c.p_value},
                      {"p_method", c.p_method},
                      {"verdict", c.verdict},
                      {"faster", c.faster},
                      {"tolerance", c.tolerance},
                      {"rounds_to_decide", nullptr},
                      {"baseline_median", c.baseline_median},
                      {"candidate_median", c.candidate_median},
                      {"warnings", c.warnings}};
  if (c.rounds_to_decide) j["rounds_to_decide"] = *c.rounds_to_decide;
  return j;
}

nlohmann::json to_json(const MixVerdict& mix) {
  nlohmann::json j = {{"slowdown", to_json(mix.slowdown)},
                      {"verdict", mix.verdict},
                      {"faster", mix.faster},
                      {"tolerance", mix.tolerance},
                      {"confidence", mix.confidence},
                      {"method", mix.method},
                      {"weights", mix.weights},
                      {"resamples", mix.resamples},
                      {"seed", mix.seed},
                      {"rounds_to_decide", nullptr},
                      {"warnings", mix.warnings}};
  if (mix.rounds_to_decide) j["rounds_to_decide"] = *mix.rounds_to_decide;
  if (mix.verdict == kNoMix) j["slowdown"] = nullptr;  // nothing was combined: no number to show
  return j;
}

nlohmann::json analyse(const SectionInput& input) {
  auto base_it = input.samples.find(input.baseline);
  if (base_it == input.samples.end()) {
    std::string cells;
    for (const auto& [name, _] : input.samples) cells += (cells.empty() ? "" : ", ") + name;
    throw UserError(fmt::format("parity: baseline cell '{}' has no samples (cells measured: {})",
                                input.baseline, cells.empty() ? "none" : cells));
  }
  const auto& baseline = base_it->second;
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& [cell_name, cell] : input.samples) {
    if (cell_name == input.baseline) continue;
    std::vector<WorkloadComparison> comparisons;
    std::vector<std::string> warnings;
    for (const auto& [workload, base_times] : baseline) {
      auto it = cell.find(workload);
      if (it == cell.end() || it->second.empty()) {
        warnings.push_back(fmt::format("workload '{}' has no samples under {}", workload, cell_name));
        continue;
      }
      if (base_times.empty()) {
        warnings.push_back(
            fmt::format("workload '{}' has no samples under the baseline {}", workload, input.baseline));
        continue;
      }
      comparisons.push_back(compare(workload, base_times, it->second, input.tolerance, input.mix.confidence));
    }
    for (const auto& [workload, _] : cell) {
      if (!baseline.count(workload)) {
        warnings.push_back(fmt::format("workload '{}' was measured under {} but not under the baseline {}",
                                       workload, cell_name, input.baseline));
      }
    }
    const MixVerdict mix = combine(comparisons, input.weights, input.tolerance, input.mix);
    nlohmann::json list = nlohmann::json::array();
    for (const auto& c : comparisons) list.push_back(to_json(c));
    cells.push_back(
        {{"name", cell_name}, {"comparisons", list}, {"mix", to_json(mix)}, {"warnings", warnings}});
  }
  nlohmann::json samples = nlohmann::json::object();
  for (const auto& [cell_name, cell] : input.samples) samples[cell_name] = cell;
  return {{"schema", "isoharness.parity/v1"},
          {"scenario", input.scenario},
          {"baseline", input.baseline},
          {"tolerance", input.tolerance},
          {"confidence", input.mix.confidence},
          {"weights", input.weights},
          {"unit", "s"},
          {"cells", cells},
          {"samples", samples}};
}

}  // namespace isoharness::parity
