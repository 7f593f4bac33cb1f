// combine(): the scenario's workload mix as a weighted geometric mean of per-workload
// ratios, with a deterministic percentile-bootstrap interval. See parity.h.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "harness/common/error.h"
#include "harness/common/random_index.h"
#include "harness/parity/hodges_lehmann.h"
#include "harness/parity/nights.h"
#include "harness/parity/parity.h"

namespace isoharness::parity {

namespace {

void resample(std::mt19937_64& rng, const std::vector<double>& from, std::vector<double>& into) {
  into.resize(from.size());
  for (double& v : into) v = from[draw_index(rng, from.size())];
}

// Linear interpolation between order statistics (numpy's default percentile).
double quantile_sorted(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

struct Used {
  const WorkloadComparison* comparison;
  double weight;
};

// The comparisons the mix combines, with their weights (not yet normalised). No weights:
// every comparison counts 1. A weighted workload without a comparison is left out, with a
// warning; a weight of 0 leaves it out silently.
std::vector<Used> weighted(const std::vector<WorkloadComparison>& comparisons,
                           const std::map<std::string, double>& weights, std::vector<std::string>& warnings) {
  std::vector<Used> used;
  if (weights.empty()) {
    for (const auto& c : comparisons) used.push_back({&c, 1.0});
    return used;
  }
  for (const auto& [workload, weight] : weights) {
    const std::string& name = workload;  // a lambda below needs a plain variable
    if (!std::isfinite(weight) || weight < 0) {
      throw UserError(
          fmt::format("parity: workload '{}': weight {} must be a finite number >= 0", name, weight));
    }
    auto it = std::find_if(comparisons.begin(), comparisons.end(),
                           [&](const WorkloadComparison& c) { return c.workload == name; });
    if (it == comparisons.end()) {
      warnings.push_back(
          fmt::format("workload '{}' (weight {}) has no comparison (skipped or not measured); "
                      "left out and the other weights renormalised",
                      name, weight));
      continue;
    }
    if (weight > 0) used.push_back({&*it, weight});
  }
  return used;
}

// The weighted log shift of each bootstrap resample (every workload's samples redrawn on
// both sides), sorted.
std::vector<double> bootstrap_log_shifts(const std::vector<Used>& used, const MixOptions& options) {
  std::mt19937_64 rng(options.seed);
  std::vector<double> stats;
  stats.reserve(static_cast<std::size_t>(options.resamples));
  std::vector<double> b, c;
  for (int r = 0; r < options.resamples; ++r) {
    double s = 0;
    for (const auto& u : used) {
      resample(rng, u.comparison->baseline_times, b);
      resample(rng, u.comparison->candidate_times, c);
      s += u.weight * hodges_lehmann_log_shift(b, c);
    }
    stats.push_back(s);
  }
  std::sort(stats.begin(), stats.end());
  return stats;
}

struct LogMoments {
  double mean = 0, var_of_mean = 0;
  std::size_t n = 0;
};

LogMoments log_moments(const std::vector<double>& times) {
  LogMoments m;
  m.n = times.size();
  for (double t : times) m.mean += std::log(t);
  m.mean /= static_cast<double>(m.n);
  double ss = 0;
  for (double t : times) ss += (std::log(t) - m.mean) * (std::log(t) - m.mean);
  m.var_of_mean = ss / static_cast<double>(m.n - 1) / static_cast<double>(m.n);
  return m;
}

// The Welch t interval of the weighted log shift (parity.h); every side has >= 2 samples.
Interval welch_log_interval(const std::vector<Used>& used, double confidence) {
  double est = 0, var = 0, df_den = 0;
  for (const auto& u : used) {
    const LogMoments b = log_moments(u.comparison->baseline_times);
    const LogMoments c = log_moments(u.comparison->candidate_times);
    est += u.weight * (c.mean - b.mean);
    for (const LogMoments& side : {b, c}) {
      const double part = u.weight * u.weight * side.var_of_mean;
      var += part;
      df_den += part * part / static_cast<double>(side.n - 1);
    }
  }
  const double df = df_den > 0 ? var * var / df_den : 1.0;
  const double half =
      var > 0 ? t_quantile(1.0 - (1.0 - confidence) / 2.0, std::max(1.0, df)) * std::sqrt(var) : 0;
  return {std::exp(est), std::exp(est - half), std::exp(est + half)};
}

// The percentile-bootstrap interval around exp(log_est). A percentile interval can miss the
// point estimate on very skewed data; it is widened to include the estimate so that
// low <= estimate <= high always holds.
Interval bootstrap_interval(const std::vector<Used>& used, const MixOptions& options, double log_est) {
  const std::vector<double> stats = bootstrap_log_shifts(used, options);
  const double half_alpha = (1.0 - options.confidence) / 2.0;
  const double est = std::exp(log_est);
  return {est, std::min(std::exp(quantile_sorted(stats, half_alpha)), est),
          std::max(std::exp(quantile_sorted(stats, 1.0 - half_alpha)), est)};
}

}  // namespace

MixVerdict combine(const std::vector<WorkloadComparison>& comparisons,
                   const std::map<std::string, double>& weights, double tolerance,
                   const MixOptions& options) {
  check_tolerance(tolerance, options.confidence);
  if (options.resamples < 100) {
    throw UserError(
        fmt::format("parity: {} bootstrap resamples are too few (use at least 100)", options.resamples));
  }
  MixVerdict mix;
  mix.tolerance = tolerance;
  mix.confidence = options.confidence;
  mix.resamples = options.resamples;
  mix.seed = options.seed;

  std::vector<Used> used = weighted(comparisons, weights, mix.warnings);
  double total = 0;
  for (const auto& u : used) total += u.weight;
  if (used.empty() || total <= 0) {
    mix.verdict = kNoMix;
    mix.warnings.emplace_back("no weighted workload was measured on both sides: nothing to combine");
    return mix;
  }
  for (auto& u : used) {
    u.weight /= total;
    mix.weights[u.comparison->workload] = u.weight;
  }

  double log_est = 0;
  std::size_t rounds = SIZE_MAX;
  for (const auto& u : used) {
    log_est += u.weight * std::log(u.comparison->ratio.estimate);
    rounds = std::min({rounds, u.comparison->n_baseline, u.comparison->n_candidate});
  }

  if (rounds < options.welch_below && rounds >= 2) {
    mix.method = kMixWelch;
    mix.resamples = 0;
    mix.slowdown = welch_log_interval(used, options.confidence);
  } else {
    mix.slowdown = bootstrap_interval(used, options, log_est);
  }
  mix.verdict = verdict_for(mix.slowdown, tolerance);
  if (mix.verdict == kInconclusive) mix.rounds_to_decide = rounds_to_decide(mix.slowdown, tolerance, rounds);
  if (rounds < kMinSamplesPerSide) {
    mix.warnings.push_back(
        fmt::format("some workloads have only {} samples on a side: the interval rests on few "
                    "values",
                    rounds));
  }
  if (mix.verdict == kFaster) {
    mix.faster = true;
    mix.warnings.push_back(
        "the mix runs faster than baseline beyond the tolerance: not comparable either way; check "
        "that the workloads did the same work");
  }
  return mix;
}

}  // namespace isoharness::parity
