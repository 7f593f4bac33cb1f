// Night-to-night variation: one parity run gives an interval that knows only the noise
// inside that run. Runs on other nights of the same deployment differ by more than that
// (shared machines, other tenants, kernel and image updates), so a verdict that stands on
// one run is overconfident. This combines the last k comparable runs with a random-effects
// model on log ratios:
//   * each run i gives y_i = log(ratio estimate) and a within-run standard error s_i, read
//     back from its interval: s_i = (log high - log low) / (2 z), z the normal quantile of
//     the run's confidence;
//   * the between-night variance tau^2 is the DerSimonian–Laird moment estimate,
//     max(0, (Q - (k - 1)) / (sum w - sum w^2 / sum w)) with w = 1 / s^2 and Q Cochran's
//     heterogeneity statistic;
//   * the combined log ratio is the mean weighted by 1 / (s_i^2 + tau^2);
//   * its interval is Hartung–Knapp–Sidik–Jonkman: a Student t with k - 1 degrees of
//     freedom around a variance scaled by the observed spread of the runs, that scale
//     floored at 1 so the interval is never narrower than the plain random-effects one.
//     With few runs this is what keeps coverage near nominal; a normal interval does not.
//   * one run alone says nothing about nights: its interval is returned as it is, and
//     `between_nights_known` is false so the reader is told.
// A/A noise: a repeated baseline cell (the baseline timed against a twin of itself) reads
// about 1.00 on a quiet night. When the largest A/A deviation over the nights combined
// exceeds the tolerance, the series is unstable: the machine's own noise is as large as
// the effect being judged, and no verdict is given.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "harness/parity/parity.h"

namespace isoharness::parity {

// One run's ratio with the confidence its interval was computed at.
struct NightRatio {
  std::string run_id;
  Interval ratio;
  double confidence = 0.95;
};

struct NightsCombined {
  Interval ratio;        // random effects, HKSJ interval
  Interval within_only;  // fixed effect (inverse-variance weights, normal interval): what
                         // the within-run noise alone would claim, shown for comparison
  double tau2 = 0;       // between-night variance of the log ratio
  std::size_t nights = 0;
  double confidence = 0.95;
  bool between_nights_known = false;  // at least two runs
  std::vector<std::string> warnings;
};

inline constexpr const char* kNightsMethod =
    "random effects on log ratios over the last runs of the same deployment: DerSimonian-Laird "
    "between-night variance, Hartung-Knapp-Sidik-Jonkman t interval (k-1 degrees of freedom, "
    "scale floored at 1)";

// The within-run standard error of the log ratio implied by an interval at `confidence`.
double log_standard_error(const Interval& interval, double confidence);

// Combines runs (at least one; UserError otherwise) at `confidence`.
NightsCombined combine_nights(std::span<const NightRatio> nights, double confidence);

// Student t quantile (Boost.Math), df > 0.
double t_quantile(double p, double df);

struct AaStability {
  std::size_t nights = 0;        // nights that timed an A/A twin
  std::optional<double> spread;  // exp(max |log A/A estimate|); nullopt without A/A
  bool unstable = false;         // spread > tolerance
  std::string reason;
};

// The A/A ratios of the nights combined (nullopt = that night timed no twin).
AaStability aa_stability(std::span<const std::optional<Interval>> aa, double tolerance);

}  // namespace isoharness::parity
