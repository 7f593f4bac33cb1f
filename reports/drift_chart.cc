// trend_svg: one series across nights. The y axis is logarithmic (a ratio's 2x up and 2x
// down are equally far from 1) and spans the data; the tolerance zone is shaded where it
// falls inside that span, and a note says so when the whole series lies far beyond it.
#include "reports/drift_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/text_format.h"

namespace isoharness::reports {

namespace {

constexpr double kTrendWidth = 1100, kTrendHeight = 270;
constexpr double kLeft = 64, kRight = 1080, kTop = 58, kBottom = 220;

struct YAxis {
  double lo, hi;
  double y(double v) const {
    const double t = (std::log(std::clamp(v, lo, hi)) - std::log(lo)) / (std::log(hi) - std::log(lo));
    return kBottom - t * (kBottom - kTop);
  }
};

YAxis make_y(const std::vector<TrendPoint>& points, double tolerance) {
  double lo = 1e300, hi = 0;
  for (const auto& p : points) {
    lo = std::min({lo, p.low, p.estimate});
    hi = std::max({hi, p.high, p.estimate});
  }
  // Show 1 and the tolerance when the data come near them.
  if (lo < tolerance * 1.5) hi = std::max(hi, tolerance * 1.02);
  if (hi > 0.67) lo = std::min(lo, 0.98);
  lo = std::max(lo, 1e-9);
  hi = std::max(hi, lo * 1.02);
  const double pad = (std::log(hi) - std::log(lo)) * 0.08;
  return {std::exp(std::log(lo) - pad), std::exp(std::log(hi) + pad)};
}

// A handful of readable ticks inside [lo, hi]: 1-2-5 per decade, or evenly spaced for a
// narrow span.
std::vector<double> y_ticks(double lo, double hi) {
  std::vector<double> out;
  if (hi / lo < 3) {
    const double raw = (hi - lo) / 5;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
      if (m * mag >= raw) {
        step = m * mag;
        break;
      }
    for (double v = std::ceil(lo / step) * step; v <= hi; v += step)
      out.push_back(std::round(v / step) * step);
    return out;
  }
  for (int e = static_cast<int>(std::floor(std::log10(lo))); e <= static_cast<int>(std::ceil(std::log10(hi)));
       ++e)
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      if (v >= lo && v <= hi) out.push_back(v);
    }
  return out;
}

std::string frame(const YAxis& a, double tolerance, const std::string& title) {
  std::string out = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0:.0f}" height="{1:.0f}" viewBox="0 0 {0:.0f} {1:.0f}" role="img" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif">)",
      kTrendWidth, kTrendHeight);
  out += "<title>" + escape_html(title) + "</title>";
  if (tolerance > a.lo) {
    const double yt = a.y(tolerance);
    out += fmt::format(
        R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#dafbe1" fill-opacity="0.6"/>)",
        kLeft, yt, kRight - kLeft, kBottom - yt);
    if (tolerance < a.hi)
      out += fmt::format(
          R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#cf222e" stroke-width="1.5" stroke-dasharray="6 4"/><text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="end" fill="#cf222e">tolerance {}</text>)",
          kLeft, yt, kRight, yt, kRight - 4, yt - 4, format_tolerance(tolerance));
  } else {
    out += fmt::format(
        R"(<text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="end" fill="#cf222e">every night far beyond the tolerance {}</text>)",
        kRight, kTop - 6, format_tolerance(tolerance));
  }
  for (double t : y_ticks(a.lo, a.hi)) {
    const double y = a.y(t);
    out += fmt::format(
        R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}" stroke="{3}" stroke-width="1"/><text x="{4:.1f}" y="{5:.1f}" font-size="11" text-anchor="end" fill="#57606a">{6:g}</text>)",
        kLeft, y, kRight, std::abs(t - 1.0) < 1e-12 ? "#8c959f" : "#eaeef2", kLeft - 6, y + 4,
        std::round(t * 1000) / 1000);
  }
  out += fmt::format(
      R"svg(<text x="12" y="{:.1f}" font-size="11" fill="#57606a" transform="rotate(-90 12 {:.1f})">ratio (log)</text>)svg",
      (kTop + kBottom) / 2 + 30, (kTop + kBottom) / 2 + 30);
  return out;
}

double x_of(std::size_t i, std::size_t n) {
  if (n <= 1) return (kLeft + kRight) / 2;
  return kLeft + 14 + static_cast<double>(i) * (kRight - kLeft - 28) / static_cast<double>(n - 1);
}

std::string cut(const std::string& s, std::size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

}  // namespace

std::string trend_svg(const std::vector<TrendPoint>& points, const std::vector<TrendSegment>& segments,
                      const std::vector<TrendChange>& changes, double tolerance, const std::string& title) {
  const YAxis a = make_y(points, tolerance);
  const std::size_t n = points.size();
  std::string out = frame(a, tolerance, title);
  for (const auto& s : segments) {
    if (s.from >= s.to || s.to > n) continue;
    out += fmt::format(
        R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#8250df" stroke-width="2" stroke-opacity="0.7"/>)",
        x_of(s.from, n) - 6, a.y(s.median), x_of(s.to - 1, n) + 6, a.y(s.median));
  }
  double last_label_x = -1e9;
  int row = 0;
  for (const auto& c : changes) {
    if (c.index == 0 || c.index >= n) continue;
    const double x = (x_of(c.index - 1, n) + x_of(c.index, n)) / 2;
    const char* colour = c.fresh ? "#cf222e" : "#bc4c00";
    row = x - last_label_x < 330 ? (row + 1) % 2 : 0;
    last_label_x = x;
    const double ty = 16 + row * 20;
    const bool right_side = x > kTrendWidth * 0.62;
    out += fmt::format(
        R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="{3}" stroke-width="2" stroke-dasharray="4 3"/>)",
        x, ty + 4, kBottom, colour);
    out += fmt::format(
        R"(<text x="{:.1f}" y="{:.1f}" font-size="11" font-weight="600" text-anchor="{}" fill="{}">{}</text>)",
        right_side ? x - 4 : x + 4, ty, right_side ? "end" : "start", colour,
        escape_html(cut(c.label + (c.note.empty() ? "" : " — " + c.note), 90)));
  }
  for (std::size_t i = 0; i < n; ++i) {
    const auto& p = points[i];
    const double x = x_of(i, n);
    out += fmt::format(
        R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="#0969da" stroke-width="1.5"/><circle cx="{0:.1f}" cy="{3:.1f}" r="3.5" fill="#0969da"/>)",
        x, a.y(p.low), a.y(p.high), a.y(p.estimate));
  }
  const std::size_t every = std::max<std::size_t>(1, (n + 9) / 10);
  for (std::size_t i = 0; i < n; i += every)
    out += fmt::format(
        R"(<text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="middle" fill="#57606a">{}</text>)",
        x_of(i, n), kBottom + 16, escape_html(cut(points[i].label, 16)));
  out += fmt::format(
      R"(<text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="middle" fill="#57606a">{}</text>)",
      (kLeft + kRight) / 2, kBottom + 36,
      "one dot per night: ratio with its interval; purple: median of each segment; dashed: change points");
  out += "</svg>";
  return out;
}

}  // namespace isoharness::reports
