// Ratios between two cells of one parity run, their interval, and the band verdict.
#include "harness/baselines/ratio.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "harness/parity/hodges_lehmann.h"

namespace isoharness::baselines {

namespace {

// Fewest samples per side among the given workloads in the given cells.
std::size_t fewest_rounds(const ParityRun& run, const std::vector<std::string>& cells,
                          const std::map<std::string, double>& weights) {
  std::size_t n = SIZE_MAX;
  for (const auto& cell : cells) {
    const auto it = run.samples.find(cell);
    if (it == run.samples.end()) continue;
    for (const auto& [workload, times] : it->second)
      if (weights.empty() || (weights.count(workload) && weights.at(workload) > 0))
        n = std::min(n, times.size());
  }
  return n == SIZE_MAX ? 0 : n;
}

}  // namespace

std::optional<parity::Interval> cell_slowdown(const ParityRun& run, const std::string& cell,
                                              const std::map<std::string, double>* weights,
                                              std::map<std::string, double>* used_weights) {
  if (!run.timed(cell)) return std::nullopt;
  if (cell == run.baseline) return parity::Interval{1.0, 1.0, 1.0};
  if (!weights) {
    const auto it = run.slowdown.find(cell);
    if (it == run.slowdown.end()) return std::nullopt;
    return it->second;
  }
  const auto& base = run.samples.at(run.baseline);
  const auto& cand = run.samples.at(cell);
  std::vector<parity::WorkloadComparison> comparisons;
  for (const auto& [workload, weight] : *weights) {
    const auto b = base.find(workload), c = cand.find(workload);
    if (weight <= 0 || b == base.end() || c == cand.end() || b->second.empty() || c->second.empty()) continue;
    comparisons.push_back(parity::compare(workload, b->second, c->second, run.tolerance, run.confidence));
  }
  parity::MixOptions options;
  options.confidence = run.confidence;
  const auto mix = parity::combine(comparisons, *weights, run.tolerance, options);
  if (mix.verdict == parity::kNoMix) return std::nullopt;
  if (used_weights) *used_weights = mix.weights;
  return mix.slowdown;
}

parity::Interval combine_ratio(const parity::Interval& t, const parity::Interval& r) {
  const double est = std::log(t.estimate) - std::log(r.estimate);
  const double down =
      std::hypot(std::log(t.estimate) - std::log(t.low), std::log(r.high) - std::log(r.estimate));
  const double up =
      std::hypot(std::log(t.high) - std::log(t.estimate), std::log(r.estimate) - std::log(r.low));
  return {std::exp(est), std::exp(est - down), std::exp(est + up)};
}

std::optional<CellRatio> ratio_in(const ParityRun& run, const std::string& record_cell,
                                  const std::string& target_cell,
                                  const std::map<std::string, double>* weights) {
  CellRatio out;
  std::map<std::string, double> used_r, used_t;
  const auto r = cell_slowdown(run, record_cell, weights, &used_r);
  const auto t = cell_slowdown(run, target_cell, weights, &used_t);
  if (!r || !t) return std::nullopt;
  out.record_slowdown = *r;
  out.target_slowdown = *t;
  out.ratio = combine_ratio(*t, *r);
  out.weights = used_t.empty() ? used_r : used_t;
  out.rounds = fewest_rounds(run, {run.baseline, record_cell, target_cell}, weights ? *weights : run.weights);
  const std::string& b = run.baseline;
  if (record_cell == b)
    out.combination = fmt::format("the target cell's mix slowdown over the parity baseline {}", b);
  else if (target_cell == b)
    out.combination =
        fmt::format("the inverse of the record cell's mix slowdown over the parity baseline {}", b);
  else
    out.combination = fmt::format(
        "ratio of the two cells' mix slowdowns over the parity baseline {}; interval combined in log space, "
        "each side's half-width the root sum of squares of the matching half-widths (independent errors; "
        "conservative, since both slowdowns share the baseline's samples)",
        b);
  return out;
}

std::string band_verdict(const parity::Interval& ratio, double tolerance) {
  const std::string v = parity::verdict_for(ratio, tolerance);
  if (v == parity::kParity) return kComparable;
  if (v == parity::kInconclusive) return kInconclusive;
  return kAdjust;  // regression or faster: wholly outside the band
}

std::optional<int> more_rounds(const parity::Interval& ratio, double tolerance, std::size_t rounds) {
  return parity::rounds_to_decide(ratio, tolerance, rounds);
}

}  // namespace isoharness::baselines
