// Change points in a series of nightly values: E-divisive means with a permutation test.
//
// The statistic (Matteson & James 2014, with exponent alpha = 1, the form Apache Otava
// uses). For a segment z[a..b) and a split tau with X = z[a..tau) (m values) and
// Y = z[tau..b) (n values):
//     E(X, Y) = 2/(m n) sum|x - y| - 1/C(m,2) sum_{i<k}|x_i - x_k| - 1/C(n,2) sum_{j<k}|y_j - y_k|
//     Q(tau)  = m n / (m + n) * E(X, Y)
// E is the energy distance between the two samples: zero when they have the same
// distribution, larger the further apart they are, and it needs no model of the noise.
// The candidate is the tau with the largest Q, both sides holding at least
// `min_segment` values. All sums come from one distance matrix and running row sums, so
// one scan over every tau costs O(n^2).
//
// Significance. Under "no change in this segment" every order of its values is equally
// likely, so the segment is shuffled `permutations` times and the largest Q of each shuffle
// is computed the same way. p = (1 + #{shuffles with max Q >= observed}) / (1 + shuffles),
// which is a valid p-value: a segment without a change is split with probability at most
// `significance`. The smallest reachable p is 1/(1 + permutations), and a segment of n
// values with a step of k values at one end has at most C(n, k) distinct orders, so a short
// series cannot reach a small p however large the step (4 + 4 nights: p >= 2/70).
//
// Several changes: binary segmentation. A significant split cuts the segment in two and
// both halves are tested again, each at the same significance. The first test covers the
// whole series, so a series without any change reports one at most `significance` of the
// time. Each test draws from its own mt19937_64 seeded from (seed, a, b) with an unbiased
// bounded draw, so results are the same on every machine and in any order of work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace isoharness::history {

struct ChangePointOptions {
  double significance = 0.05;
  int permutations = 999;
  std::size_t min_segment = 3;  // values on each side of a split, at least 1
  std::uint64_t seed = 0xD81F7C0DE5ULL;
};

struct ChangePoint {
  std::size_t index = 0;  // first value of the new segment
  double statistic = 0;   // Q at the split
  double p_value = 1;
};

// The change points of `values`, in increasing index order. Values must be finite (the
// caller works on log ratios). Throws std::invalid_argument for bad options.
std::vector<ChangePoint> find_change_points(std::span<const double> values,
                                            const ChangePointOptions& options = {});

// The best split of values[a..b) and its Q, or index 0 when the segment is shorter than
// 2 * min_segment. Exposed for tests.
ChangePoint best_split(std::span<const double> values, std::size_t min_segment);

}  // namespace isoharness::history
