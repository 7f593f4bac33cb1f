// Forest and strip plots as inline SVG. Both use a log axis because ratios are
// multiplicative: 2x slower and 2x faster sit at equal distances from 1.
//
// When the ratios reach far beyond the tolerance (getpid under gVisor is ~40x), the region
// around 1 and the tolerance, where the verdicts are decided, keeps most of the width and
// the rest of the axis is compressed; break marks show where the scale changes.
//
// Tick choice: per axis segment, evenly spaced nice steps for a narrow range and 1-2-5 style
// patterns per decade for a wide one, the densest that fits the segment's width, so a
// narrow A/A range (0.98–1.03) and a wide one (0.5–60) both get readable ticks.
#include "reports/svg_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/text_format.h"

namespace isoharness::reports {

namespace {

constexpr double kPlotWidth = 1100;

// A log axis that may give the region around 1 and the tolerance more room than the rest
// ("focus + context"): up to three segments, each logarithmic, with their own pixel span.
struct Segment {
  double u0, u1;    // log(ratio) range
  double px0, px1;  // pixels
};

struct LogAxis {
  std::vector<Segment> segments;
  double lo = 1, hi = 1;  // whole domain (ratios)
  double x0 = 0, x1 = 0;  // whole pixel span
  double x(double v) const {
    const double u = std::log(std::clamp(v, lo, hi));
    for (const auto& s : segments) {
      if (u <= s.u1 || &s == &segments.back()) {
        const double t = s.u1 > s.u0 ? (u - s.u0) / (s.u1 - s.u0) : 0.0;
        return s.px0 + std::clamp(t, 0.0, 1.0) * (s.px1 - s.px0);
      }
    }
    return x1;
  }
  bool broken() const { return segments.size() > 1; }
};

// Domain [lo, hi] padded a little; when it reaches far beyond the focus region
// [min(0.9, 1/T), max(1.25, T^2)], that region gets most of the width.
LogAxis make_axis(double lo, double hi, double x0, double x1, double tolerance) {
  lo = std::max(lo, 1e-9);
  hi = std::max(hi, lo * 1.0001);
  const double pad = (std::log(hi) - std::log(lo)) * 0.04;
  LogAxis a;
  a.lo = std::exp(std::log(lo) - pad);
  a.hi = std::exp(std::log(hi) + pad);
  a.x0 = x0;
  a.x1 = x1;
  const double f0 = std::max(a.lo, std::min(0.9, 1.0 / tolerance));
  const double f1 = std::min(a.hi, std::max(1.25, tolerance * tolerance));
  const bool left = a.lo < f0 / 1.5;
  const bool right = a.hi > f1 * 1.5;
  if (!left && !right) {
    a.segments.push_back({std::log(a.lo), std::log(a.hi), x0, x1});
    return a;
  }
  const double width = x1 - x0;
  const double left_px = left ? width * 0.15 : 0.0;
  const double right_px = right ? width * (left ? 0.30 : 0.40) : 0.0;
  double px = x0;
  if (left) {
    a.segments.push_back({std::log(a.lo), std::log(f0), px, px + left_px});
    px += left_px;
  }
  const double focus_lo = left ? f0 : a.lo, focus_hi = right ? f1 : a.hi;
  a.segments.push_back({std::log(focus_lo), std::log(focus_hi), px, x1 - right_px});
  if (right) a.segments.push_back({std::log(f1), std::log(a.hi), x1 - right_px, x1});
  return a;
}

// Nice ticks inside [lo, hi], at most max_ticks. Narrow ranges (less than 3x) get evenly
// spaced ticks with a 1/2/2.5/5 x 10^k step; wider ones the densest of the log patterns
// 1, 1-2-5 and 1-1.5-2-3-5-7 per decade that fits.
std::vector<double> nice_ticks(double lo, double hi, std::size_t max_ticks) {
  std::vector<double> best;
  if (hi / lo < 3) {
    for (int k = static_cast<int>(std::floor(std::log10(hi - lo))) + 1; k >= -6; --k) {
      for (double m : {5.0, 2.5, 2.0, 1.0}) {
        const double step = m * std::pow(10.0, k);
        std::vector<double> ticks;
        for (double v = std::ceil(lo / step) * step; v <= hi * (1 + 1e-12) && ticks.size() <= max_ticks;
             v += step) {
          ticks.push_back(std::round(v / step) * step);
        }
        if (ticks.size() > max_ticks) return best;
        if (!ticks.empty()) best = ticks;
      }
    }
    return best;
  }
  const std::vector<std::vector<double>> levels = {{1}, {1, 2, 5}, {1, 1.5, 2, 3, 5, 7}};
  for (const auto& mantissas : levels) {
    std::vector<double> ticks;
    const int e0 = static_cast<int>(std::floor(std::log10(lo))) - 1;
    const int e1 = static_cast<int>(std::ceil(std::log10(hi))) + 1;
    for (int e = e0; e <= e1; ++e) {
      for (double m : mantissas) {
        const double v = m * std::pow(10.0, e);
        if (v >= lo && v <= hi) ticks.push_back(v);
      }
    }
    if (ticks.size() > max_ticks) break;
    best = ticks;
  }
  return best;
}

std::vector<double> ticks_for(const LogAxis& a) {
  std::vector<double> out;
  double last_px = -1e9;
  for (const auto& s : a.segments) {
    const auto max_ticks = static_cast<std::size_t>(std::max(1.0, (s.px1 - s.px0) / 42.0));
    for (double t : nice_ticks(std::exp(s.u0), std::exp(s.u1), max_ticks)) {
      const double px = a.x(t);
      if (px - last_px < 30) continue;  // labels would collide
      out.push_back(t);
      last_px = px;
    }
  }
  return out;
}

std::string tick_label(double v) {
  return fmt::format("{:g}", std::round(v * 1000) / 1000);
}

std::string axis_svg(const LogAxis& a, double top, double bottom, const std::string& caption) {
  std::string out;
  for (double t : ticks_for(a)) {
    const double x = a.x(t);
    out += fmt::format(
        R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="#d0d7de" stroke-width="1"/>)", x,
        top, bottom);
    out += fmt::format(
        R"(<text x="{:.1f}" y="{:.1f}" font-size="12" text-anchor="middle" fill="#57606a">{}</text>)", x,
        bottom + 16, tick_label(t));
  }
  // Where the scale changes, a break mark on the axis.
  for (std::size_t i = 1; i < a.segments.size(); ++i) {
    const double x = a.segments[i].px0;
    out += fmt::format(
        R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="#8c959f" stroke-width="1" stroke-dasharray="2 3"/>)",
        x, top, bottom);
    out += fmt::format(
        R"(<path d="M{:.1f},{:.1f} l4,-5 l4,10 l4,-5" fill="none" stroke="#8c959f" stroke-width="1.2"/>)",
        x - 6, bottom + 4);
  }
  std::string full = caption;
  if (a.broken()) full += "; the scale is stretched between the break marks";
  out += fmt::format(
      R"(<text x="{:.1f}" y="{:.1f}" font-size="12" text-anchor="middle" fill="#57606a">{}</text>)",
      (a.x0 + a.x1) / 2, bottom + 33, escape_html(full));
  return out;
}

// An interval as a bar with end caps and its estimate as an open circle.
std::string interval_marks(double xl, double xh, double xe, double cy, const std::string& colour) {
  std::string out = fmt::format(
      R"(<line x1="{0:.1f}" y1="{2:.1f}" x2="{1:.1f}" y2="{2:.1f}" stroke="{3}" stroke-width="3" stroke-linecap="round"/>)",
      xl, xh, cy, colour);
  for (const double x : {xl, xh})
    out += fmt::format(
        R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="{3}" stroke-width="2"/>)", x,
        cy - 5, cy + 5, colour);
  out +=
      fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="5" fill="#ffffff" stroke="{}" stroke-width="2.5"/>)",
                  xe, cy, colour);
  return out;
}

std::string svg_open(double height, const std::string& title) {
  return fmt::format(
             R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0:.0f}" height="{1:.0f}" viewBox="0 0 {0:.0f} {1:.0f}" role="img" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif">)",
             kPlotWidth, height) +
         "<title>" + escape_html(title) + "</title>";
}

std::string reference_lines(const LogAxis& a, double tolerance, double top, double bottom) {
  std::string out;
  if (1.0 > a.lo && 1.0 < a.hi) {
    out += fmt::format(
        R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="#57606a" stroke-width="1.5"/>)",
        a.x(1.0), top, bottom);
  }
  const double xt = a.x(tolerance);
  out += fmt::format(
      R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="#cf222e" stroke-width="2" stroke-dasharray="6 4"/>)",
      xt, top - 6, bottom);
  out += fmt::format(
      R"(<text x="{:.1f}" y="{:.1f}" font-size="12" text-anchor="start" fill="#cf222e">tolerance {}</text>)",
      xt + 4, top - 8, format_tolerance(tolerance));
  return out;
}

}  // namespace

std::string verdict_colour(const std::string& verdict) {
  if (verdict == "parity") return "#1a7f37";
  if (verdict == "regression") return "#cf222e";
  return "#bf8700";
}

std::string cell_colour(std::size_t index) {
  static const char* palette[] = {"#6e7781", "#0969da", "#bc4c00", "#8250df",
                                  "#1a7f37", "#bf3989", "#0a7ea4"};
  return palette[index % (sizeof(palette) / sizeof(palette[0]))];
}

std::string forest_svg(const std::vector<ForestRow>& rows, double tolerance, const std::string& title) {
  const double row_h = 26, top = 34, label_x = 170, text_x = 740;
  double lo = std::min(0.95, 1.0 / tolerance), hi = std::max(1.05, tolerance * 1.04);
  for (const auto& r : rows) {
    lo = std::min(lo, r.low);
    hi = std::max(hi, r.high);
  }
  const LogAxis a = make_axis(lo, hi, label_x + 12, text_x - 24, tolerance);
  const double rule =
      std::count_if(rows.begin(), rows.end(), [](const ForestRow& r) { return r.summary; }) > 0 ? 8 : 0;
  const double bottom = top + row_h * static_cast<double>(rows.size()) + rule;
  const double height = bottom + 44;
  std::string out = svg_open(height, title);
  // Zones: below the tolerance is parity, above it a slowdown beyond what is accepted.
  const double xt = a.x(tolerance);
  out += fmt::format(
      R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#dafbe1" fill-opacity="0.55"/>)",
      a.x0, top, xt - a.x0, bottom - top);
  out += fmt::format(
      R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#ffebe9" fill-opacity="0.7"/>)", xt,
      top, a.x1 - xt, bottom - top);
  out += axis_svg(a, top, bottom,
                  "ratio candidate / baseline (log scale; left of the red line = within tolerance)");
  out += reference_lines(a, tolerance, top, bottom);
  out += fmt::format(
      R"(<text x="{:.1f}" y="{:.1f}" font-size="12" font-weight="600" fill="#57606a">ratio [95 % CI] · verdict</text>)",
      text_x, top - 8);
  double y = top;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (r.summary) {
      out += fmt::format(
          R"(<line x1="10" y1="{0:.1f}" x2="{1:.0f}" y2="{0:.1f}" stroke="#57606a" stroke-width="1"/>)",
          y + rule / 2, kPlotWidth - 10);
      y += rule;
    } else if (i % 2 == 1) {
      out += fmt::format(
          R"(<rect x="10" y="{:.1f}" width="{:.0f}" height="{:.0f}" fill="#f6f8fa" fill-opacity="0.6"/>)", y,
          kPlotWidth - 20, row_h);
    }
    const double cy = y + row_h / 2;
    const std::string colour = verdict_colour(r.verdict);
    out += fmt::format(
        R"(<text x="{:.1f}" y="{:.1f}" font-size="13" text-anchor="end" fill="#1f2328"{}>{}</text>)", label_x,
        cy + 4, r.summary ? R"( font-weight="700")" : "", escape_html(r.label));
    const double xl = a.x(r.low), xh = a.x(r.high), xe = a.x(r.estimate);
    if (r.summary) {
      out += fmt::format(
          R"(<polygon points="{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}" fill="{}" stroke="{}"/>)",
          xl, cy, xe, cy - 8, xh, cy, xe, cy + 8, colour, colour);
    } else {
      out += interval_marks(xl, xh, xe, cy, colour);
    }
    out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="13" fill="{}"{}>{}</text>)", text_x, cy + 4,
                       colour, r.summary ? R"( font-weight="700")" : "", escape_html(r.right_text));
    y += row_h;
  }
  out += "</svg>";
  return out;
}

namespace {

// The strip chart's legend: one coloured dot and name per cell, the first marked as baseline.
std::string strip_legend(const std::vector<std::string>& cells, double lx) {
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    out += fmt::format(R"(<circle cx="{:.1f}" cy="12" r="5" fill="{}"/>)", lx, cell_colour(i));
    const std::string label = cells[i] + (i == 0 ? " (baseline)" : "");
    out += fmt::format(R"(<text x="{:.1f}" y="16" font-size="12" fill="#1f2328">{}</text>)", lx + 9,
                       escape_html(label));
    lx += 24 + 7.0 * static_cast<double>(label.size());
  }
  return out;
}

// One series of a strip: a dot per relative time on the row at cy, and a bar at their median.
std::string strip_series(const StripSeries& s, const LogAxis& a, double cy, const std::string& colour) {
  std::string out;
  for (double v : s.relative) {
    out += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="2.6" fill="{}" fill-opacity="0.65"/>)", a.x(v),
                       cy, colour);
  }
  if (!s.relative.empty()) {
    std::vector<double> sorted = s.relative;
    std::sort(sorted.begin(), sorted.end());
    const double med = (sorted[(sorted.size() - 1) / 2] + sorted[sorted.size() / 2]) / 2;
    out += fmt::format(
        R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="{3}" stroke-width="2.5"/>)",
        a.x(med), cy - 6, cy + 6, colour);
  }
  return out;
}

}  // namespace

std::string strip_svg(const std::vector<StripGroup>& groups, const std::vector<std::string>& cells,
                      double tolerance, const std::string& title) {
  const double sub_h = 13, gap = 10, top = 44, label_x = 200;
  double lo = 0.95, hi = std::max(1.05, tolerance * 1.04);
  for (const auto& g : groups) {
    for (const auto& s : g.series) {
      for (double v : s.relative) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    }
  }
  const LogAxis a = make_axis(lo, hi, label_x + 12, kPlotWidth - 30, tolerance);
  double height_rows = 0;
  for (const auto& g : groups)
    height_rows += sub_h * static_cast<double>(std::max<std::size_t>(g.series.size(), 1)) + gap;
  const double bottom = top + height_rows;
  const double height = bottom + 44;
  std::string out = svg_open(height, title);
  out += strip_legend(cells, label_x + 10);
  out += axis_svg(a, top, bottom, "time relative to the baseline median (log scale)");
  out += reference_lines(a, tolerance, top, bottom);
  double y = top;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const auto& g = groups[gi];
    const double block = sub_h * static_cast<double>(std::max<std::size_t>(g.series.size(), 1));
    if (gi % 2 == 0) {
      out += fmt::format(
          R"(<rect x="10" y="{:.1f}" width="{:.0f}" height="{:.1f}" fill="#f6f8fa" fill-opacity="0.7"/>)",
          y - gap / 2, kPlotWidth - 20, block + gap);
    }
    out += fmt::format(
        R"(<text x="{:.1f}" y="{:.1f}" font-size="13" text-anchor="end" fill="#1f2328">{}</text>)", label_x,
        y + block / 2 + (g.note.empty() ? 4 : -1), escape_html(g.workload));
    if (!g.note.empty()) {
      out += fmt::format(
          R"(<text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="end" fill="#57606a">{}</text>)", label_x,
          y + block / 2 + 12, escape_html(g.note));
    }
    for (const auto& s : g.series) {
      const auto it = std::find(cells.begin(), cells.end(), s.cell);
      out += strip_series(s, a, y + sub_h / 2, cell_colour(static_cast<std::size_t>(it - cells.begin())));
      y += sub_h;
    }
    if (g.series.empty()) y += sub_h;
    y += gap;
  }
  out += "</svg>";
  return out;
}

}  // namespace isoharness::reports

namespace isoharness::reports {

std::string band_svg(const std::vector<BandRow>& rows, double tolerance, const std::string& title,
                     const std::string& caption) {
  const double row_h = 22, top = 34, label_x = 260, text_x = 800;
  double lo = std::min(0.95, 1.0 / tolerance / 1.04), hi = std::max(1.05, tolerance * 1.04);
  for (const auto& r : rows) {
    lo = std::min(lo, r.low);
    hi = std::max(hi, r.high);
  }
  const LogAxis a = make_axis(lo, hi, label_x + 12, text_x - 24, tolerance);
  const double bottom = top + row_h * static_cast<double>(rows.size());
  std::string out = svg_open(bottom + 44, title);
  const double xb0 = a.x(1.0 / tolerance), xb1 = a.x(tolerance);
  out += fmt::format(
      R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#dafbe1" fill-opacity="0.7"/>)",
      xb0, top, xb1 - xb0, bottom - top);
  out += axis_svg(a, top, bottom, caption);
  for (const double b : {1.0 / tolerance, tolerance})
    out += fmt::format(
        R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="#1a7f37" stroke-width="1.5" stroke-dasharray="5 3"/>)",
        a.x(b), top - 6, bottom);
  out += fmt::format(
      R"(<text x="{:.1f}" y="{:.1f}" font-size="12" text-anchor="middle" fill="#1a7f37">tolerance band [1/{}, {}]</text>)",
      (xb0 + xb1) / 2, top - 10, format_tolerance(tolerance), format_tolerance(tolerance));
  if (1.0 > a.lo && 1.0 < a.hi)
    out += fmt::format(
        R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="#57606a" stroke-width="1"/>)",
        a.x(1.0), top, bottom);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const double y = top + row_h * static_cast<double>(i), cy = y + row_h / 2;
    if (i % 2 == 1)
      out += fmt::format(
          R"(<rect x="10" y="{:.1f}" width="{:.0f}" height="{:.0f}" fill="#f6f8fa" fill-opacity="0.5"/>)", y,
          kPlotWidth - 20, row_h);
    out += fmt::format(
        R"(<text x="{:.1f}" y="{:.1f}" font-size="12" text-anchor="end" fill="#1f2328">{}</text>)", label_x,
        cy + 4, escape_html(r.label));
    out += interval_marks(a.x(r.low), a.x(r.high), a.x(r.estimate), cy, r.colour);
    out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="12" fill="{}">{}</text>)", text_x, cy + 4,
                       r.colour, escape_html(r.right_text));
  }
  return out + "</svg>";
}

}  // namespace isoharness::reports
