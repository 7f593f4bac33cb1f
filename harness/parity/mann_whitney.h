// The Mann–Whitney U test pieces that parity's intervals and p-values are built from.
// See parity.h for how they are used; the exact/asymptotic choice follows
// scipy.stats.mannwhitneyu's default ("auto") so that p-values agree with it.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace isoharness::parity {

// Exact null distribution of U for sample sizes m and n: element u is P(U = u), u = 0..m·n.
std::vector<double> mann_whitney_pmf(std::size_t m, std::size_t n);

// True when the pooled sample holds two equal values.
bool has_ties(std::span<const double> x, std::span<const double> y);

// scipy's "auto" rule (a side has <= 8 samples and no ties), plus m·n <= kExactMaxPairs.
inline constexpr std::size_t kExactMaxPairs = 5000;
bool use_exact(std::size_t m, std::size_t n, bool ties);

struct PValue {
  double p = 1.0;
  double u1 = 0.0;     // U statistic of x, as scipy reports it
  std::string method;  // "exact" or "asymptotic"
};

// Two-sided Mann–Whitney test of x against y, with continuity correction and the
// tie-corrected variance in the asymptotic case (scipy's defaults).
PValue mann_whitney_p(std::span<const double> x, std::span<const double> y);

struct CriticalIndex {
  std::size_t k = 0;               // 1-based rank of the lower bound among the m·n differences
  bool attainable = true;          // false: even [d_(1), d_(mn)] is below the confidence asked
  double achieved_confidence = 0;  // coverage of [d_(k), d_(mn+1-k)]
  std::string method;              // "exact" or "normal"
};

// The order statistic of the pairwise differences that bounds the confidence interval of
// the shift (see parity.h). Always returns k >= 1 (k = 1 when not attainable).
CriticalIndex mann_whitney_critical_index(std::size_t m, std::size_t n, double confidence, bool exact);

// Standard normal helpers (Boost.Math).
double normal_quantile(double p);
double normal_sf(double z);

}  // namespace isoharness::parity
