// What the HTML reports (parity, drift, selftest) share: one style sheet, in which each
// page names only the rules that are its own, and the head of a page.
#pragma once

#include <string>
#include <string_view>

namespace isoharness::reports {

// The page-specific parts of the shared style sheet, each one or more whole CSS rules
// ending in a newline, placed where the shared sheet leaves room for them.
struct PageStyle {
  int max_width_px = 1120;
  std::string_view headings;  // h2 and below
  std::string_view verdicts;  // the colour classes of the page's verdicts
  std::string_view cells;     // th and td
  std::string_view extra;     // the page's own elements
  bool footer = true;         // the page ends with a <footer>
};

// The style sheet: body, h1, the page's headings, .meta, .verdict, the page's verdict
// classes, table, the page's cells, th's background, the page's own rules, footer.
std::string page_style(const PageStyle& style);

// Everything before the page's first element: doctype, charset, viewport, title (already
// escaped) and the style sheet, up to and including <body>.
std::string page_head(const std::string& escaped_title, const std::string& style);

}  // namespace isoharness::reports
