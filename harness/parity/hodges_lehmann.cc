#include "harness/parity/hodges_lehmann.h"

#include <algorithm>
#include <cmath>

#include "harness/common/error.h"
#include "harness/common/median.h"

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

double hodges_lehmann_log_shift(std::span<const double> baseline, std::span<const double> candidate) {
  ISOHARNESS_CHECK(!baseline.empty() && !candidate.empty());
  return median(log_differences(baseline, candidate));
}

}  // namespace isoharness::parity
