// render_selftest_html: the detection matrix as one self-contained page.
#include <fmt/format.h>

#include "reports/html_page.h"
#include "reports/selftest_reports.h"
#include "reports/selftest_view.h"
#include "reports/text_format.h"

namespace isoharness::reports {
namespace {

std::string selftest_style() {
  return page_style({.max_width_px = 1280,
                     .headings =
                         "h2 { font-size: 18px; margin: 26px 0 6px; border-bottom: 1px solid #d0d7de; "
                         "padding-bottom: 4px; }\n",
                     .verdicts = ".pass, .caught, .clean { background: #dafbe1; color: #116329; }\n"
                                 ".fail, .missed, .false_alarm { background: #ffebe9; color: #a40e26; }\n"
                                 ".error { background: #fff8c5; color: #7d4e00; }\n"
                                 ".na { background: #f6f8fa; color: #57606a; }\n",
                     .cells = "th, td { padding: 4px 10px; border: 1px solid #d8dee4; text-align: left; "
                              "vertical-align: top; }\n",
                     .extra = "td.cell { min-width: 220px; }\ncode { font-size: 12px; }\n",
                     .footer = false});
}

std::string css_class(const std::string& status) {
  return status == "n/a" ? "na" : status;
}

std::string cell_html(const nlohmann::json& cell) {
  const std::string status = cell_status(cell);
  return fmt::format("<td class=\"cell {}\"><b>{}</b> {}</td>", css_class(status), escape_html(status),
                     escape_html(truncate_text(cell_detail(cell), 600)));
}

std::string matrix(const nlohmann::json& s) {
  std::string out = "<table><tr><th>weakening</th><th>layer</th><th>must be caught by</th>";
  for (const auto& r : s["runtimes"]) out += "<th>" + escape_html(json_to_text(r)) + "</th>";
  out += "</tr>\n";
  for (const auto& w : s["weakenings"]) {
    out += fmt::format("<tr><td><code>{}</code><br>{}</td><td>{}</td><td>{}</td>",
                       escape_html(str_or(w, "name")), escape_html(str_or(w, "what")),
                       escape_html(str_or(w, "layer")),
                       escape_html(join_list(w.value("caught_by", nlohmann::json::array()))));
    for (const auto& r : s["runtimes"])
      out += cell_html(w["cells"].value(json_to_text(r), nlohmann::json::object()));
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string clean_table(const nlohmann::json& s) {
  std::string out = "<table><tr><th>runtime</th><th>sandboxes</th><th>result</th></tr>\n";
  for (const auto& c : s["clean"]) {
    const std::string status = str_or(c, "status", "error");
    std::string text = status == "false_alarm" ? "false alarm: " + join_list(c["failed_controls"])
                       : status == "clean"     ? "no check failed"
                                               : status + ": " + str_or(c, "reason");
    out += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"{}\">{}</td></tr>\n",
                       escape_html(str_or(c, "runtime")),
                       escape_html(join_list(c.value("sandboxes", nlohmann::json::array()))),
                       css_class(status), escape_html(text));
  }
  return out + "</table>\n";
}

}  // namespace

std::string render_selftest_html(const nlohmann::json& result) {
  const auto& s = selftest_section(result);
  const auto& summary = s["summary"];
  const std::string verdict = str_or(summary, "verdict", "error");
  const nlohmann::json context = result.value("context", nlohmann::json::object());
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>isoharness selftest</title>"
      "<style>{}</style></head><body>\n<h1>isoharness selftest</h1>\n",
      selftest_style());
  out += fmt::format(
      "<p class=\"meta\">run {} · scenario {} · host {} · runc {} · runsc {} · {:.0f} s · parallel {}</p>\n",
      escape_html(str_or(result.value("run", nlohmann::json::object()), "id", "?")),
      escape_html(str_or(s, "scenario", "?")), escape_html(str_or(context, "host", "?")),
      escape_html(str_or(context, "runc", "?")), escape_html(str_or(context, "runsc", "?")),
      s.value("duration_s", 0.0), s.value("parallel", 0));
  out += fmt::format(
      "<div class=\"verdict {}\">{}: {} · {} got through · {} false alarm(s) · {} not applicable · {} "
      "error(s)</div>\n",
      verdict == "pass" ? "pass" : (verdict == "fail" ? "fail" : "error"), escape_html(verdict),
      escape_html(caught_line(summary)), summary.value("missed", nlohmann::json::array()).size(),
      summary.value("false_alarms", nlohmann::json::array()).size(), summary.value("not_applicable", 0),
      summary.value("errors", 0));
  if (s.contains("disabled_checks") && !s["disabled_checks"].empty())
    out += "<p class=\"error\">Test seam: judged as if verify had no check " +
           escape_html(join_list(s["disabled_checks"])) + "</p>\n";
  out += "<h2>Detection matrix</h2>\n" + matrix(s);
  out +=
      "<h2>Clean controls</h2>\n<p class=\"meta\">The unweakened item under each runtime: any failed check "
      "is a false alarm.</p>\n" +
      clean_table(s);
  return out + "</body></html>\n";
}

}  // namespace isoharness::reports
