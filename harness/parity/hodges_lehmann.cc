#include "harness/parity/hodges_lehmann.h"

#include <algorithm>
#include <cmath>

#include "harness/common/error.h"

namespace isoharness::parity {

std::vector<double> log_differences(std::span<const double> baseline, std::span<const double> candidate) {
  std::vector<double> log_b(baseline.size());
  std::transform(baseline.begin(), baseline.end(), log_b.begin(), [](double v) { return std::log(v); });
  std::vector<double> out;
  out.reserve(baseline.size() * candidate.size());
  for (double c : candidate) {
    const double log_c = std::log(c);
    for (double lb : log_b) out.push_back(log_c - lb);
  }
  return out;
}

double sorted_median(std::vector<double>& values) {
  ISOHARNESS_CHECK(!values.empty());
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2.0;
}

double hodges_lehmann_log_shift(std::span<const double> baseline, std::span<const double> candidate) {
  std::vector<double> diffs = log_differences(baseline, candidate);
  return sorted_median(diffs);
}

}  // namespace isoharness::parity
