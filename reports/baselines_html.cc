// render_baselines_html: one self-contained page for the baselines document: the verdict
// counts, one chart of every record's ratio (corrected / recorded duration) interval
// against the tolerance band, and the table.
#include <fmt/format.h>

#include "reports/baselines_reports.h"
#include "reports/baselines_view.h"
#include "reports/html_page.h"
#include "reports/svg_charts.h"
#include "reports/text_format.h"

namespace isoharness::reports {

namespace {

std::string baselines_style() {
  return page_style({.max_width_px = 1160,
                     .headings = "h2 { font-size: 17px; margin: 22px 0 4px; }\n",
                     .verdicts = ".comparable { color: #1a7f37; } .adjust { color: #cf222e; } "
                                 ".inconclusive { color: #bf8700; } .stale { color: #8250df; } "
                                 ".unknown { color: #6e7781; }\n",
                     .cells =
                         "th, td { padding: 3px 8px; border-bottom: 1px solid #d8dee4; text-align: left; "
                         "vertical-align: top; font-size: 13px; }\n",
                     .extra = ".why { color: #57606a; font-size: 12px; }\n"});
}

// The chart: records with a ratio, against the band of the first tolerance found.
std::string corrected_ratio_chart(const nlohmann::json& doc) {
  std::vector<BandRow> rows;
  double tolerance = 0;
  for (const auto& r : doc["records"]) {
    if (!r["ratio"].is_object()) continue;
    if (tolerance == 0) tolerance = r["tolerance"].get<double>();
    const auto& i = effective_interval(r);
    rows.push_back({fmt::format("{}: {} / {} ({})", r["line"].get<int>(), str_or(r, "task"),
                                str_or(r, "item"), str_or(r, "cell")),
                    i["estimate"].get<double>(), i["low"].get<double>(), i["high"].get<double>(),
                    baseline_colour(str_or(r, "verdict")),
                    fmt::format("{} s · {}", interval_cell(r["corrected_s"], 0), verdict_text(r))});
  }
  if (rows.empty()) return "<p>No record has a ratio: no parity run timed their cells.</p>\n";
  const std::size_t left_out = doc["records"].size() - rows.size();
  const std::string note =
      left_out == 0 ? ""
                    : fmt::format(
                          "<p class=\"meta\">{} record(s) without a ratio (verdict unknown) are in the "
                          "table only.</p>\n",
                          left_out);
  return note +
         band_svg(
             rows, tolerance, "Each record's corrected interval against the tolerance band",
             "corrected / recorded duration = 1 - f + f x ratio target / record, f the compute share (log "
             "scale); inside the green band = comparable") +
         "\n";
}

std::string table(const nlohmann::json& doc) {
  std::string out = fmt::format(
      "<table><tr><th>line</th><th>task / item</th><th>human</th><th>recorded</th><th>cell</th><th>mix</th>"
      "<th>duration</th><th>ratio [{0}]</th><th>compute share</th><th>corrected [{0}]</th><th>verdict</th>"
      "<th>source run</th></tr>\n",
      escape_html(ci_heading(doc)));
  for (const auto& r : doc["records"]) {
    std::string why = escape_html(str_or(r, "reason"));
    for (const auto& c : r["drift"]) why += "<br>" + escape_html(change_text(c));
    const auto& src = r["source"];
    out += fmt::format(
        "<tr><td>{}</td><td>{} / {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0f} "
        "s</td><td>{}</td><td>{}</td>"
        "<td>{} s</td><td class=\"{}\"><b>{}</b><div class=\"why\">{}</div></td><td>{}</td></tr>\n",
        r["line"].get<int>(), escape_html(str_or(r, "task")), escape_html(str_or(r, "item")),
        escape_html(str_or(r, "human")), escape_html(str_or(r, "recorded_at")),
        escape_html(str_or(r, "cell")), escape_html(str_or(r, "mix")), r["duration_s"].get<double>(),
        interval_cell(r["ratio"], 3), escape_html(fraction_text(r)), interval_cell(r["corrected_s"], 0),
        escape_html(str_or(r, "verdict")), escape_html(verdict_text(r)), why,
        src.is_object() ? escape_html(str_or(src, "run") + " (" + str_or(src, "backend") + "/" +
                                      str_or(src, "deployment") + ")")
                        : "-");
  }
  return out + "</table>\n";
}

}  // namespace

std::string render_baselines_html(const nlohmann::json& doc) {
  const auto& t = doc["target"];
  std::string out = page_head("Human baselines against " + escape_html(str_or(t, "cell")), baselines_style());
  out += "<h1>Human baselines against " + escape_html(str_or(t, "cell")) + "</h1>\n";
  out +=
      fmt::format("<p class=\"meta\">{} records from {} · as of {} · {} parity run(s) in the history</p>\n",
                  doc["summary"]["records"].get<int>(), escape_html(str_or(doc["input"], "file")),
                  escape_html(str_or(t, "at")), doc["parity_runs"].size());
  if (doc.contains("deployment") && doc["deployment"].is_object())
    out += "<p class=\"meta\">Deployment: " + escape_html(str_or(doc["deployment"], "rule")) + ".</p>\n";
  out += "<div class=\"verdict\">" + escape_html(summary_text(doc["summary"])) + "</div>\n";
  out += "<h2>Corrected intervals</h2>\n" + corrected_ratio_chart(doc);
  out += "<h2>Records</h2>\n" + table(doc);
  out += "<footer>" + escape_html(str_or(doc["method"], "ratio")) + ". " +
         escape_html(str_or(doc["method"], "compute_fraction")) + ". " +
         escape_html(str_or(doc["method"], "verdict")) + ".</footer>\n</body>\n</html>\n";
  return out;
}

}  // namespace isoharness::reports
