// Random-effects combination of runs and the A/A stability label. See nights.h.
#include "harness/parity/nights.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>

#include "harness/common/error.h"
#include "harness/parity/mann_whitney.h"

namespace isoharness::parity {

double t_quantile(double p, double df) {
  return boost::math::quantile(boost::math::students_t_distribution<double>(df), p);
}

double log_standard_error(const Interval& interval, double confidence) {
  const double z = normal_quantile(1.0 - (1.0 - confidence) / 2.0);
  return (std::log(interval.high) - std::log(interval.low)) / (2.0 * z);
}

namespace {

// The smallest variance a run may claim: a zero-width interval (identical samples) would
// otherwise take all the weight.
constexpr double kVarianceFloor = 1e-12;

struct LogRun {
  double y = 0, v = 0;
};

std::vector<LogRun> log_runs(std::span<const NightRatio> nights) {
  std::vector<LogRun> runs;
  for (const auto& n : nights) {
    if (!(n.ratio.low > 0) || !(n.ratio.high >= n.ratio.low) || !(n.ratio.estimate > 0))
      throw UserError(fmt::format("nights: run '{}' has no usable ratio interval", n.run_id));
    const double s = log_standard_error(n.ratio, n.confidence);
    runs.push_back({std::log(n.ratio.estimate), std::max(s * s, kVarianceFloor)});
  }
  return runs;
}

double dersimonian_laird_tau2(const std::vector<LogRun>& runs) {
  double sw = 0, sw2 = 0, swy = 0;
  for (const auto& r : runs) {
    sw += 1 / r.v;
    sw2 += 1 / (r.v * r.v);
    swy += r.y / r.v;
  }
  const double fixed = swy / sw;
  double q = 0;
  for (const auto& r : runs) q += (r.y - fixed) * (r.y - fixed) / r.v;
  const double c = sw - sw2 / sw;
  const auto k = static_cast<double>(runs.size());
  return c > 0 ? std::max(0.0, (q - (k - 1)) / c) : 0.0;
}

Interval around(double mu, double half) {
  return {std::exp(mu), std::exp(mu - half), std::exp(mu + half)};
}

}  // namespace

NightsCombined combine_nights(std::span<const NightRatio> nights, double confidence) {
  if (nights.empty()) throw UserError("nights: no run to combine");
  NightsCombined out;
  out.nights = nights.size();
  out.confidence = confidence;
  const std::vector<LogRun> runs = log_runs(nights);
  const double z = normal_quantile(1.0 - (1.0 - confidence) / 2.0);
  double sw = 0, swy = 0;
  for (const auto& r : runs) {
    sw += 1 / r.v;
    swy += r.y / r.v;
  }
  out.within_only = around(swy / sw, z / std::sqrt(sw));
  if (runs.size() == 1) {
    out.ratio = nights.front().ratio;
    out.warnings.emplace_back(
        "one run only: the interval is that run's and does not include night-to-night variation");
    return out;
  }
  out.between_nights_known = true;
  out.tau2 = dersimonian_laird_tau2(runs);
  double sws = 0, swsy = 0;
  for (const auto& r : runs) {
    sws += 1 / (r.v + out.tau2);
    swsy += r.y / (r.v + out.tau2);
  }
  const double mu = swsy / sws;
  double q = 0;
  for (const auto& r : runs) q += (r.y - mu) * (r.y - mu) / (r.v + out.tau2);
  const auto df = static_cast<double>(runs.size() - 1);
  const double scale = std::max(1.0, q / df);
  const double t = t_quantile(1.0 - (1.0 - confidence) / 2.0, df);
  out.ratio = around(mu, t * std::sqrt(scale / sws));
  if (runs.size() < 3)
    out.warnings.emplace_back(
        "two runs only: the between-night variance is barely estimable and the "
        "interval is wide");
  return out;
}

AaStability aa_stability(std::span<const std::optional<Interval>> aa, double tolerance) {
  AaStability out;
  double worst = 0;
  for (const auto& a : aa) {
    if (!a || !(a->estimate > 0)) continue;
    ++out.nights;
    worst = std::max(worst, std::fabs(std::log(a->estimate)));
  }
  if (out.nights == 0) {
    out.reason = "no A/A twin was timed in these runs: the machine's own noise is unmeasured";
    return out;
  }
  out.spread = std::exp(worst);
  out.unstable = *out.spread > tolerance;
  out.reason = fmt::format("largest A/A deviation over {} run(s): {:.3f} ({} the tolerance {:.2f})",
                           out.nights, *out.spread, out.unstable ? "above" : "within", tolerance);
  return out;
}

}  // namespace isoharness::parity
