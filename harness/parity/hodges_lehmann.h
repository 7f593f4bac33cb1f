// Building blocks shared by compare() and combine(): log pairwise differences, medians,
// the tolerance check and the rounds-to-decide estimate. Internal to harness/parity.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "harness/parity/parity.h"

namespace isoharness::parity {

// log(c_j) - log(b_i) for every pair, unsorted (m·n values).
std::vector<double> log_differences(std::span<const double> baseline, std::span<const double> candidate);

// Hodges–Lehmann shift of log times (median of log_differences).
double hodges_lehmann_log_shift(std::span<const double> baseline, std::span<const double> candidate);

// Throws UserError unless tolerance > 1 and 0 < confidence < 1.
void check_tolerance(double tolerance, double confidence);

// More rounds until an inconclusive interval would clear the tolerance line, assuming its
// width shrinks as 1/sqrt(rounds); nullopt when it cannot be estimated.
std::optional<int> rounds_to_decide(const Interval& interval, double tolerance, std::size_t rounds_now);

}  // namespace isoharness::parity
