// compare(): one workload's ratio candidate/baseline, its Mann–Whitney interval, p-value
// and equivalence verdict. The method is explained at the top of parity.h.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "harness/common/error.h"
#include "harness/common/median.h"
#include "harness/parity/hodges_lehmann.h"
#include "harness/parity/mann_whitney.h"
#include "harness/parity/parity.h"

namespace isoharness::parity {

namespace {

void check_samples(const std::string& workload, const char* side, std::span<const double> times) {
  if (times.empty()) {
    throw UserError(fmt::format("parity: workload '{}': no {} samples", workload, side));
  }
  for (std::size_t i = 0; i < times.size(); ++i) {
    if (!std::isfinite(times[i]) || times[i] <= 0) {
      throw UserError(
          fmt::format("parity: workload '{}': {} sample {} is {} (times must be positive and finite)",
                      workload, side, i, times[i]));
    }
  }
}

double median_of(std::span<const double> v) {
  ISOHARNESS_CHECK(!v.empty());
  return median(std::vector<double>(v.begin(), v.end()));
}

}  // namespace

void check_tolerance(double tolerance, double confidence) {
  if (!std::isfinite(tolerance) || tolerance <= 1.0) {
    throw UserError(fmt::format(
        "parity: tolerance {} must be a ratio above 1 (e.g. 1.10 = at most 10 % slower)", tolerance));
  }
  if (!(confidence > 0 && confidence < 1)) {
    throw UserError(fmt::format("parity: confidence {} must be between 0 and 1 (e.g. 0.95)", confidence));
  }
}

std::string verdict_for(const Interval& interval, double tolerance) {
  if (interval.low >= 1.0 / tolerance && interval.high <= tolerance) return kParity;
  if (interval.low > tolerance) return kRegression;
  if (interval.high < 1.0 / tolerance) return kFaster;
  return kInconclusive;
}

// For each bound the interval straddles: the rounds that would shrink the half-width
// facing it to the estimate's distance from it (half-width ~ 1/sqrt(rounds)).
std::optional<int> rounds_to_decide(const Interval& interval, double tolerance, std::size_t rounds_now) {
  if (rounds_now == 0) return std::nullopt;
  const double e = std::log(interval.estimate), l = std::log(interval.low), h = std::log(interval.high);
  double needed = 0;
  for (const double bound : {std::log(tolerance), -std::log(tolerance)}) {
    if (!(l < bound && bound < h)) continue;
    const double distance = std::abs(e - bound);
    const double half = e < bound ? h - e : e - l;
    if (distance < 1e-12 || !std::isfinite(half)) return std::nullopt;
    needed = std::max(needed, static_cast<double>(rounds_now) * (half / distance) * (half / distance));
  }
  const double more = std::ceil(needed) - static_cast<double>(rounds_now);
  if (!std::isfinite(more) || more > 1e6) return std::nullopt;
  return std::max(1, static_cast<int>(more));
}

namespace {

// The verdict, the rounds still needed, and the warnings a reader must see.
void judge_comparison(WorkloadComparison& c, const CriticalIndex& crit, double tolerance, double confidence) {
  const std::size_t rounds = std::min(c.n_baseline, c.n_candidate);
  if (rounds < kMinSamplesPerSide) {
    c.warnings.push_back(
        fmt::format("only {} baseline and {} candidate samples (fewer than {} per side): "
                    "too few to say much",
                    c.n_baseline, c.n_candidate, kMinSamplesPerSide));
  }
  if (!crit.attainable) {
    c.warnings.push_back(
        fmt::format("a {:.0f} % interval needs more samples; the widest interval these "
                    "give covers only {:.1f} %",
                    confidence * 100, crit.achieved_confidence * 100));
    c.verdict = kInconclusive;
    // At least enough to reach the minimum per side; the interval then tells more.
    c.rounds_to_decide = rounds < kMinSamplesPerSide ? static_cast<int>(kMinSamplesPerSide - rounds) : 1;
  } else {
    c.verdict = verdict_for(c.ratio, tolerance);
    if (c.verdict == kInconclusive) c.rounds_to_decide = rounds_to_decide(c.ratio, tolerance, rounds);
  }
  if (c.ratio.low == c.ratio.high) {
    c.warnings.push_back("the interval has zero width: the samples are identical or too coarsely quantised");
  }
  if (c.verdict == kFaster) {
    c.faster = true;
    c.warnings.push_back(
        fmt::format("candidate faster than baseline beyond the tolerance (ratio {:.3f}, "
                    "interval below {:.3f}): human baseline times would not compare either; "
                    "check that the workload did the same work under both",
                    c.ratio.estimate, 1.0 / tolerance));
  }
  if (c.verdict == kInconclusive && !c.rounds_to_decide && crit.attainable) {
    c.warnings.push_back("the estimate sits on the tolerance line: more rounds may not decide it");
  }
}

}  // namespace

WorkloadComparison compare(std::string workload, std::span<const double> baseline_times,
                           std::span<const double> candidate_times, double tolerance, double confidence) {
  check_tolerance(tolerance, confidence);
  check_samples(workload, "baseline", baseline_times);
  check_samples(workload, "candidate", candidate_times);

  WorkloadComparison c;
  c.workload = std::move(workload);
  c.n_baseline = baseline_times.size();
  c.n_candidate = candidate_times.size();
  c.tolerance = tolerance;
  c.confidence = confidence;
  c.baseline_times.assign(baseline_times.begin(), baseline_times.end());
  c.candidate_times.assign(candidate_times.begin(), candidate_times.end());
  c.baseline_median = median_of(baseline_times);
  c.candidate_median = median_of(candidate_times);

  const bool ties = has_ties(baseline_times, candidate_times);
  const bool exact = use_exact(c.n_baseline, c.n_candidate, ties);
  std::vector<double> diffs = log_differences(baseline_times, candidate_times);
  std::sort(diffs.begin(), diffs.end());
  const CriticalIndex crit = mann_whitney_critical_index(c.n_baseline, c.n_candidate, confidence, exact);
  const double shift = (diffs[(diffs.size() - 1) / 2] + diffs[diffs.size() / 2]) / 2.0;
  c.ratio.estimate = std::exp(shift);
  c.ratio.low = std::exp(diffs[crit.k - 1]);
  c.ratio.high = std::exp(diffs[diffs.size() - crit.k]);
  c.ci_method = crit.method;
  c.achieved_confidence = crit.achieved_confidence;

  const PValue p = mann_whitney_p(baseline_times, candidate_times);
  c.p_value = p.p;
  c.p_method = p.method;

  judge_comparison(c, crit, tolerance, confidence);
  return c;
}

}  // namespace isoharness::parity
