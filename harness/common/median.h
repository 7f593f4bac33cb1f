// The median of a sample: the middle value, or the mean of the two middle values of an
// even-sized one. Partial selection (nth_element), so it stays linear for the large
// vectors of pairwise differences the parity statistics take it of.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

namespace isoharness {

// NaN for an empty sample: there is no middle, and no number should pretend otherwise.
inline double median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  const double upper = *mid;
  if (values.size() % 2 == 1) return upper;
  return (*std::max_element(values.begin(), mid) + upper) / 2.0;
}

}  // namespace isoharness
