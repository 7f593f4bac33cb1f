// Alpha-spending schedule for sequential parity rounds. See sequential.h.
#include "harness/parity/sequential.h"

#include <fmt/format.h>

#include <cmath>

#include "harness/common/error.h"
#include "harness/parity/mann_whitney.h"

namespace isoharness::parity {

namespace {

double spent_by(double t, double alpha, Spending spending) {
  if (t >= 1.0) return alpha;
  if (spending == Spending::kPocock) return alpha * std::log(1.0 + (std::exp(1.0) - 1.0) * t);
  const double z = normal_quantile(1.0 - alpha / 2.0);
  return 2.0 * normal_sf(z / std::sqrt(t));
}

}  // namespace

std::string to_string(Spending spending) {
  return spending == Spending::kPocock ? "pocock" : "obrien-fleming";
}

std::vector<Look> spending_schedule(int batch, int max_rounds, double confidence, Spending spending) {
  if (batch < 1 || max_rounds < batch)
    throw UserError(fmt::format("parity: batches of {} rounds up to {} rounds: need 1 <= batch <= budget",
                                batch, max_rounds));
  if (!(confidence > 0 && confidence < 1))
    throw UserError(fmt::format("parity: confidence {} must be between 0 and 1", confidence));
  const double alpha = 1.0 - confidence;
  std::vector<Look> looks;
  double spent = 0;
  for (int rounds = batch;; rounds += batch) {
    if (rounds > max_rounds) rounds = max_rounds;
    const double now = spent_by(static_cast<double>(rounds) / max_rounds, alpha, spending);
    looks.push_back({rounds, now - spent, 1.0 - (now - spent)});
    spent = now;
    if (rounds == max_rounds) break;
  }
  return looks;
}

}  // namespace isoharness::parity
