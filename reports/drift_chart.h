// The trend chart of one drift series as inline SVG (internal to reports/): plain SVG 1.1,
// no scripts, nothing fetched.
#pragma once

#include <string>
#include <vector>

namespace isoharness::reports {

struct TrendPoint {
  std::string label;  // the run's date, under the axis
  double estimate = 1, low = 1, high = 1;
};

struct TrendChange {
  std::size_t index = 0;  // first point after the change
  std::string label;      // e.g. "r8 · x1.21 · p 0.004"
  std::string note;       // what changed with it
  bool fresh = false;     // new since the last night
};

struct TrendSegment {
  std::size_t from = 0, to = 0;  // points [from, to)
  double median = 1;
};

// Nights left to right, ratio on a log axis: each night's estimate with its interval, the
// region within the tolerance shaded, each segment's median as a line, change points as
// labelled vertical rules.
std::string trend_svg(const std::vector<TrendPoint>& points, const std::vector<TrendSegment>& segments,
                      const std::vector<TrendChange>& changes, double tolerance, const std::string& title);

}  // namespace isoharness::reports
