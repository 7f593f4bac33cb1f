// Mann–Whitney U: exact null distribution, scipy-compatible p-values and the critical
// order statistic for the Hodges–Lehmann interval.
//
// The exact distribution counts, for sizes (a, b), the arrangements with U = u by the
// recurrence f(a, b, u) = f(a-1, b, u-b) + f(a, b-1, u) (Mann and Whitney 1947; the same
// one scipy uses). Only additions of non-negative counts, so doubles stay accurate; the
// table is kept one b-layer at a time, a row per a <= min(m, n).
#include "harness/parity/mann_whitney.h"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <numeric>

#include "harness/common/error.h"

namespace isoharness::parity {

std::vector<double> mann_whitney_pmf(std::size_t m, std::size_t n) {
  const std::size_t small = std::min(m, n);
  const std::size_t large = std::max(m, n);
  const std::size_t top = small * large;
  // layer[a][u] = f(a, b, u) for the current b.
  std::vector<std::vector<double>> layer(small + 1, std::vector<double>(top + 1, 0.0));
  for (auto& row : layer) row[0] = 1.0;  // b = 0: only U = 0
  for (std::size_t b = 1; b <= large; ++b) {
    // In place, rows in increasing a: row a still holds f(a, b-1, .) when it is updated,
    // row a-1 already holds f(a-1, b, .).
    for (std::size_t a = 1; a <= small; ++a) {
      for (std::size_t u = a * b; u >= b; --u) layer[a][u] += layer[a - 1][u - b];
    }
  }
  std::vector<double> pmf = layer[small];
  const double total = std::accumulate(pmf.begin(), pmf.end(), 0.0);
  for (double& v : pmf) v /= total;
  return pmf;
}

bool has_ties(std::span<const double> x, std::span<const double> y) {
  std::vector<double> pooled(x.begin(), x.end());
  pooled.insert(pooled.end(), y.begin(), y.end());
  std::sort(pooled.begin(), pooled.end());
  return std::adjacent_find(pooled.begin(), pooled.end()) != pooled.end();
}

bool use_exact(std::size_t m, std::size_t n, bool ties) {
  if (m > 8 && n > 8) return false;
  if (ties) return false;
  return m * n <= kExactMaxPairs;
}

double normal_quantile(double p) {
  return boost::math::quantile(boost::math::normal_distribution<double>(), p);
}

double normal_sf(double z) {
  if (std::isinf(z)) return z > 0 ? 0.0 : 1.0;
  return boost::math::cdf(boost::math::complement(boost::math::normal_distribution<double>(), z));
}

namespace {

// Average ranks (1-based) of the pooled sample; returns the rank sum of the first `m`
// entries and the tie term sum(t^3 - t) over groups of equal values.
struct Ranks {
  double rank_sum_x = 0;
  double tie_term = 0;
};

Ranks pooled_ranks(std::span<const double> x, std::span<const double> y) {
  struct Entry {
    double value;
    bool from_x;
  };
  std::vector<Entry> all;
  all.reserve(x.size() + y.size());
  for (double v : x) all.push_back({v, true});
  for (double v : y) all.push_back({v, false});
  std::sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) { return a.value < b.value; });
  Ranks r;
  std::size_t i = 0;
  while (i < all.size()) {
    std::size_t j = i;
    while (j + 1 < all.size() && all[j + 1].value == all[i].value) ++j;
    const double t = static_cast<double>(j - i + 1);
    const double avg = (static_cast<double>(i + 1) + static_cast<double>(j + 1)) / 2.0;
    for (std::size_t k = i; k <= j; ++k) {
      if (all[k].from_x) r.rank_sum_x += avg;
    }
    r.tie_term += t * t * t - t;
    i = j + 1;
  }
  return r;
}

}  // namespace

PValue mann_whitney_p(std::span<const double> x, std::span<const double> y) {
  ISOHARNESS_CHECK(!x.empty() && !y.empty());
  const double m = static_cast<double>(x.size());
  const double n = static_cast<double>(y.size());
  const Ranks ranks = pooled_ranks(x, y);
  PValue out;
  out.u1 = ranks.rank_sum_x - m * (m + 1) / 2.0;
  const double u = std::max(out.u1, m * n - out.u1);
  if (use_exact(x.size(), y.size(), ranks.tie_term > 0)) {
    out.method = "exact";
    const std::vector<double> pmf = mann_whitney_pmf(x.size(), y.size());
    // P(U >= u) = P(U <= mn - u) by symmetry, as scipy computes it.
    const auto upto = static_cast<std::size_t>(std::llround(m * n - u));
    double tail = 0;
    for (std::size_t k = 0; k <= upto && k < pmf.size(); ++k) tail += pmf[k];
    out.p = std::clamp(2.0 * tail, 0.0, 1.0);
    return out;
  }
  out.method = "asymptotic";
  const double total = m + n;
  const double var = m * n / 12.0 * ((total + 1) - ranks.tie_term / (total * (total - 1)));
  const double numerator = u - m * n / 2.0 - 0.5;
  if (var <= 0) {
    out.p = 1.0;  // every value equal: nothing to tell apart
    return out;
  }
  out.p = std::clamp(2.0 * normal_sf(numerator / std::sqrt(var)), 0.0, 1.0);
  return out;
}

CriticalIndex mann_whitney_critical_index(std::size_t m, std::size_t n, double confidence, bool exact) {
  ISOHARNESS_CHECK(m > 0 && n > 0 && confidence > 0 && confidence < 1);
  const double half_alpha = (1.0 - confidence) / 2.0;
  const std::size_t pairs = m * n;
  const std::size_t k_max = (pairs + 1) / 2;  // never let the bounds cross
  CriticalIndex out;
  long long k = 0;
  if (exact) {
    out.method = "exact";
    const std::vector<double> pmf = mann_whitney_pmf(m, n);
    // Largest k with P(U <= k-1) <= alpha/2: walk the CDF up.
    double cdf = 0;
    while (static_cast<std::size_t>(k) < pairs) {
      const double next = cdf + pmf[static_cast<std::size_t>(k)];
      if (next > half_alpha * (1 + 1e-12)) break;
      cdf = next;
      ++k;
    }
    k = std::min<long long>(k, static_cast<long long>(k_max));
    const long long used = std::max<long long>(k, 1);
    double below = 0;  // P(U <= used-1)
    for (long long i = 0; i < used; ++i) below += pmf[static_cast<std::size_t>(i)];
    out.achieved_confidence = std::max(0.0, 1.0 - 2.0 * below);
  } else {
    out.method = "normal";
    const double mn = static_cast<double>(pairs);
    const double sigma = std::sqrt(mn * (static_cast<double>(m + n) + 1.0) / 12.0);
    const double z = normal_quantile(1.0 - half_alpha);
    k = static_cast<long long>(std::floor(mn / 2.0 + 0.5 - z * sigma));
    k = std::min<long long>(k, static_cast<long long>(k_max));
    const long long used = std::max<long long>(k, 1);
    const double below = 1.0 - normal_sf((static_cast<double>(used) - 0.5 - mn / 2.0) / sigma);
    out.achieved_confidence = std::max(0.0, 1.0 - 2.0 * below);
  }
  out.attainable = k >= 1;
  out.k = static_cast<std::size_t>(std::max<long long>(k, 1));
  return out;
}

}  // namespace isoharness::parity
