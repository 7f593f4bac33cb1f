// E-divisive means with a permutation test: see change_points.h for the method.
#include "harness/history/change_points.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "harness/common/random_index.h"

namespace isoharness::history {

namespace {

// Fisher–Yates with draw_index (harness/common/random_index.h).
void shuffle(std::mt19937_64& rng, std::vector<double>& v) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[draw_index(rng, i)]);
}

// splitmix64 step: spreads (seed, a, b) into a seed of its own for one test.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

double pairs(std::size_t k) {
  return static_cast<double>(k) * static_cast<double>(k - 1) / 2.0;
}

}  // namespace

ChangePoint best_split(std::span<const double> values, std::size_t min_segment) {
  const std::span<const double> z = values;
  const std::size_t n = z.size();
  ChangePoint best;
  if (min_segment < 1 || n < 2 * min_segment) return best;
  // before[t] = sum_{i<t} |z_i - z_t|; after[t] = sum_{j>t} |z_t - z_j|.
  std::vector<double> before(n, 0.0), after(n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const double d = std::fabs(z[i] - z[j]);
      before[j] += d;
      after[i] += d;
    }
  // Split at tau = 1 to start: X = {z0}, Y = the rest.
  double within_x = 0.0;      // sum over pairs inside X
  double within_y = 0.0;      // sum over pairs inside Y
  double between = after[0];  // sum over x in X, y in Y
  for (std::size_t t = 1; t < n; ++t) within_y += after[t];
  best.statistic = -INFINITY;
  for (std::size_t tau = 1; tau < n; ++tau) {
    if (tau > 1) {
      // Move z[tau-1] from Y to X.
      const std::size_t k = tau - 1;
      within_x += before[k];
      within_y -= after[k];
      between += after[k] - before[k];
    }
    const std::size_t m = tau, r = n - tau;
    if (m < min_segment || r < min_segment) continue;
    const double cross = 2.0 * between / (static_cast<double>(m) * static_cast<double>(r));
    const double wx = m > 1 ? within_x / pairs(m) : 0.0;
    const double wy = r > 1 ? within_y / pairs(r) : 0.0;
    const double q =
        static_cast<double>(m) * static_cast<double>(r) / static_cast<double>(n) * (cross - wx - wy);
    if (q > best.statistic) {
      best.statistic = q;
      best.index = tau;
    }
  }
  return best;
}

std::vector<ChangePoint> find_change_points(std::span<const double> values,
                                            const ChangePointOptions& options) {
  if (!(options.significance > 0 && options.significance < 1))
    throw std::invalid_argument("change points: significance must be in (0, 1)");
  if (options.permutations < 1) throw std::invalid_argument("change points: permutations must be at least 1");
  if (options.min_segment < 1) throw std::invalid_argument("change points: min_segment must be at least 1");
  for (double v : values)
    if (!std::isfinite(v)) throw std::invalid_argument("change points: a value is not finite");

  std::vector<ChangePoint> found;
  std::vector<std::pair<std::size_t, std::size_t>> todo = {{0, values.size()}};
  while (!todo.empty()) {
    auto [a, b] = todo.back();
    todo.pop_back();
    const auto segment = values.subspan(a, b - a);
    ChangePoint split = best_split(segment, options.min_segment);
    if (split.index == 0) continue;
    std::mt19937_64 rng(mix(options.seed ^ mix(a * 0x100000001B3ULL + b)));
    std::vector<double> shuffled(segment.begin(), segment.end());
    // Once more shuffles reach the observed Q than the significance allows, the split
    // cannot be significant: stop early (the decision is the same as after all of them).
    const double allowed = options.significance * (1.0 + options.permutations) - 1.0;
    // A shuffle that splits the values into the same two sets has the same Q, summed in
    // another order: compare with a relative margin so rounding does not break such ties
    // in favour of significance.
    const double reach = split.statistic - 1e-9 * std::fabs(split.statistic);
    int at_least = 0;
    for (int i = 0; i < options.permutations && at_least <= allowed; ++i) {
      shuffle(rng, shuffled);
      if (best_split(shuffled, options.min_segment).statistic >= reach) ++at_least;
    }
    if (at_least > allowed) continue;
    split.p_value = (1.0 + at_least) / (1.0 + options.permutations);
    split.index += a;
    found.push_back(split);
    todo.push_back({a, split.index});
    todo.push_back({split.index, b});
  }
  std::sort(found.begin(), found.end(), [](const auto& l, const auto& r) { return l.index < r.index; });
  return found;
}

}  // namespace isoharness::history
