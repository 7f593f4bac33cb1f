#include "reports/html_page.h"

#include <fmt/format.h>

namespace isoharness::reports {

std::string page_style(const PageStyle& style) {
  std::string out = fmt::format(
      "\nbody {{ font-family: system-ui, -apple-system, \"Segoe UI\", Roboto, sans-serif; color: #1f2328; "
      "margin: 20px 28px;\n       max-width: {}px; line-height: 1.4; }}\n",
      style.max_width_px);
  out += "h1 { font-size: 22px; margin: 0 0 4px; }\n";
  out += style.headings;
  out += ".meta { color: #57606a; font-size: 13px; margin: 0 0 8px; }\n";
  out +=
      ".verdict { display: inline-block; padding: 6px 12px; border-radius: 6px; font-size: 15px; margin: 4px "
      "0 "
      "8px; }\n";
  out += style.verdicts;
  out += "table { border-collapse: collapse; font-size: 13px; margin: 6px 0; }\n";
  out += style.cells;
  out += "th { background: #f6f8fa; }\n";
  out += style.extra;
  if (style.footer) {
    out +=
        "footer { color: #57606a; font-size: 12px; margin-top: 24px; border-top: 1px solid #d0d7de; "
        "padding-top: 8px; }\n";
  }
  return out;
}

std::string page_head(const std::string& escaped_title, const std::string& style) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<title>" +
         escaped_title + "</title>\n<style>" + style + "</style>\n</head>\n<body>\n";
}

}  // namespace isoharness::reports
