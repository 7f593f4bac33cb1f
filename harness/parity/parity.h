// Timing parity: does a workload run about as fast under the candidate (e.g. gVisor on a
// non-tier node) as under the baseline (e.g. runc on a tier node)?
//
// The question is one of equivalence, not of difference: "is the slowdown within the
// scenario's tolerance T" (T = 1.10 means the candidate may be at most 10 % slower).
//
// Per workload (compare):
//   * Work on log times, so a shift is a ratio: d_ij = log(c_j) - log(b_i) for every pair of
//     a baseline time b_i (m of them) and a candidate time c_j (n of them).
//   * The Hodges–Lehmann estimate of the shift is the median of the m·n differences;
//     exp() of it is the ratio candidate/baseline.
//   * Its distribution-free confidence interval comes from the Mann–Whitney U distribution:
//     with the differences sorted, the interval is [d_(k), d_(mn+1-k)] (1-based) where k is
//     the largest integer with P(U <= k-1) <= alpha/2 under the null. P comes from the exact
//     distribution of U when scipy's mannwhitneyu would use it (a side has <= 8 samples and
//     the pooled sample has no ties; we also require m·n <= 20000 to bound the work),
//     otherwise from the normal approximation with continuity correction:
//     k = floor(mn/2 + 0.5 - z·sqrt(mn(m+n+1)/12)). Inverting the test this way gives the
//     set of ratios that the two-sided Mann–Whitney test does not reject.
//   * The p-value is the two-sided Mann–Whitney test exactly as scipy.stats.mannwhitneyu
//     computes it by default (method "auto", continuity correction, tie-corrected variance).
//   * Verdict against T, one vocabulary for parity and baselines alike. The question is
//     two-sided: a candidate much faster than baseline makes human baseline times as
//     unfair to agents as a much slower one, and usually means the workload did not do the
//     same work under both runtimes. The band is [1/T, T] and the interval is the two-sided
//     one at the run's confidence: "parity" when the whole interval lies inside the band,
//     "regression" when it lies wholly above T, "faster" when it lies wholly below 1/T,
//     "inconclusive" when it straddles either bound. (Read as two one-sided tests, an
//     interval at confidence c decides equivalence at level (1 - c) / 2 per bound.)
//     baselines uses the same function: comparable = parity, adjust = regression or faster.
//     For an inconclusive result, rounds_to_decide estimates how many more rounds would
//     decide it: the interval's half-width on the side facing the bound it straddles
//     shrinks roughly as 1/sqrt(rounds), so the rounds needed are
//     rounds·(half_width / distance_to_bound)^2 (all in log space), less those run.
//   * `faster` is set exactly when the verdict is "faster", with a warning saying why.
//   * Warnings: fewer than 5 samples on a side; an interval that cannot reach the
//     requested confidence with so few samples (then the verdict is always
//     "inconclusive"); an interval of zero width.
//
// Per scenario (combine): the workload mix (weights) gives a weighted geometric mean of the
// per-workload ratios, exp(sum w_i log r_i / sum w_i). Its interval is a percentile
// bootstrap: each workload's baseline and candidate samples are resampled independently
// (with replacement), the Hodges–Lehmann ratios and their weighted geometric mean are
// recomputed, and the alpha/2 and 1-alpha/2 quantiles are taken (with fewer than
// kBootstrapMinRounds samples on a side, a Welch t interval on log times instead: below). The generator is a
// mt19937_64 with a fixed seed and our own unbiased bounded draw, so the result is the same
// on every machine. The verdict against T is the human-baseline validity verdict.
//
// An A/A run (candidate = baseline) reads "parity" at about 1.00: that is the noise floor.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace isoharness::parity {

inline constexpr const char* kParity = "parity";
inline constexpr const char* kRegression = "regression";
inline constexpr const char* kInconclusive = "inconclusive";
inline constexpr const char* kFaster = "faster";
// Stated once, printed with every verdict (reports and the baselines document).
inline constexpr const char* kVerdictSides =
    "two-sided: parity when the run's two-sided interval lies inside [1/T, T], regression wholly above T, "
    "faster wholly below 1/T, inconclusive when it straddles a bound";
// A mix with nothing to combine: every workload measured on both sides weighs 0 (e.g.
// `--workloads getpid`, whose weight is 0). It has no slowdown and decides nothing.
inline constexpr const char* kNoMix = "no_mix";

// The mix interval's two methods. With at least kBootstrapMinRounds samples on every side of
// every workload used, a percentile bootstrap; with fewer (e.g. the 5 rounds of --quick) a
// percentile bootstrap under-covers (it cannot see beyond the few values drawn), so the
// interval is a Welch t interval on log times instead: the estimate is the weighted mean
// of the per-workload differences of mean log times, its variance the weighted sum of
// var(log b)/m + var(log c)/n, the degrees of freedom Welch–Satterthwaite's.
inline constexpr std::size_t kBootstrapMinRounds = 10;
inline constexpr const char* kMixBootstrap =
    "weighted geometric mean of Hodges-Lehmann ratios; percentile bootstrap";
inline constexpr const char* kMixWelch =
    "weighted mean of log-time differences; Welch t interval (few rounds: a bootstrap under-covers)";

// Samples below this count per side draw a warning.
inline constexpr std::size_t kMinSamplesPerSide = 5;

// A ratio candidate/baseline with its confidence interval (low <= estimate <= high).
struct Interval {
  double estimate = 1.0;
  double low = 1.0;
  double high = 1.0;
};

struct WorkloadComparison {
  std::string workload;
  std::size_t n_baseline = 0;
  std::size_t n_candidate = 0;
  Interval ratio;
  double confidence = 0.95;           // requested
  double achieved_confidence = 0.95;  // what the interval's order statistics give
  std::string ci_method;              // "exact" or "normal"
  double p_value = 1.0;               // two-sided Mann–Whitney (scipy's default)
  std::string p_method;               // "exact" or "asymptotic"
  std::string verdict;                // kParity, kRegression, kFaster or kInconclusive
  bool faster = false;                // verdict is kFaster
  double tolerance = 1.10;
  std::optional<int> rounds_to_decide;  // only when inconclusive and estimable
  std::vector<std::string> warnings;
  double baseline_median = 0.0;  // seconds (or whatever unit the samples came in)
  double candidate_median = 0.0;
  // The samples, kept for the mix bootstrap (not written by to_json).
  std::vector<double> baseline_times;
  std::vector<double> candidate_times;
};

// Compares one workload. Times must be positive and finite and each side non-empty;
// otherwise throws UserError naming the workload and the sample. tolerance must be > 1,
// confidence in (0, 1).
WorkloadComparison compare(std::string workload, std::span<const double> baseline_times,
                           std::span<const double> candidate_times, double tolerance,
                           double confidence = 0.95);

struct MixOptions {
  double confidence = 0.95;
  int resamples = 2000;
  std::uint64_t seed = 0x150AA12E55ULL;
  // Fewer rounds than this on a side: the Welch t interval instead of the bootstrap
  // (0 = always the bootstrap; tests use it to show what the bootstrap gives).
  std::size_t welch_below = kBootstrapMinRounds;
};

// The human-baseline validity verdict for one cell.
struct MixVerdict {
  Interval slowdown;    // weighted geometric mean ratio and its interval
  std::string verdict;  // kParity, kRegression, kFaster, kInconclusive or kNoMix (slowdown unset)
  bool faster = false;
  double tolerance = 1.10;
  double confidence = 0.95;
  std::map<std::string, double> weights;  // normalised to sum 1, only workloads used
  int resamples = 0;
  std::uint64_t seed = 0;
  std::optional<int> rounds_to_decide;
  std::vector<std::string> warnings;
  std::string method = kMixBootstrap;
};

// Combines the comparisons of one cell with the scenario's weights (workload -> weight).
// Empty weights mean equal weights over all comparisons. A weighted workload without a
// comparison (skipped) is left out with a warning and the rest renormalised; a comparison
// without a weight does not count. Weights must be finite and >= 0 with a positive sum
// over the workloads used, else UserError.
MixVerdict combine(const std::vector<WorkloadComparison>& comparisons,
                   const std::map<std::string, double>& weights, double tolerance,
                   const MixOptions& options = {});

// Samples of one run: cell name ("runtime/node_class") -> workload -> times (seconds).
using Samples = std::map<std::string, std::map<std::string, std::vector<double>>>;

struct SectionInput {
  std::string scenario;
  std::string baseline;  // a key of samples
  double tolerance = 1.10;
  std::map<std::string, double> weights;
  Samples samples;
  MixOptions mix;
};

// The parity section of the result document (schema in reports/README.md): every cell
// other than the baseline compared with it, workload by workload (workloads present on
// both sides), plus the mix verdict per cell. Throws UserError when the baseline cell is
// missing or the input is otherwise unusable.
nlohmann::json analyse(const SectionInput& input);

nlohmann::json to_json(const Interval& interval);
nlohmann::json to_json(const WorkloadComparison& comparison);
nlohmann::json to_json(const MixVerdict& mix);

// Shared by compare, combine and baselines: the verdict for an interval against the band
// [1/tolerance, tolerance] (see the top of this file).
std::string verdict_for(const Interval& interval, double tolerance);

}  // namespace isoharness::parity
