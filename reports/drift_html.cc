// render_drift_html: the drift document as one page of trend charts.
#include <fmt/format.h>

#include "reports/drift_chart.h"
#include "reports/drift_reports.h"
#include "reports/drift_view.h"
#include "reports/html_page.h"
#include "reports/parity_view.h"
#include "reports/text_format.h"

namespace isoharness::reports {

namespace {

std::string drift_style() {
  return page_style(
      {.max_width_px = 1120,
       .headings = "h2 { font-size: 17px; margin: 22px 0 4px; border-bottom: 1px solid #d0d7de; "
                   "padding-bottom: 3px; }\n",
       .verdicts = ".changed { background: #ffebe9; color: #a40e26; }\n"
                   ".steady { background: #dafbe1; color: #116329; }\n",
       .cells = "th, td { padding: 3px 10px; border-bottom: 1px solid #d8dee4; text-align: left; "
                "vertical-align: top; }\n",
       .extra = ".new { color: #a40e26; font-weight: 600; }\n"
                "details summary { cursor: pointer; color: #0969da; font-size: 14px; margin: 12px 0; "
                "}\n"});
}

std::string change_label(const nlohmann::json& c) {
  return fmt::format("{} · x{} · p {}", str_or(c, "run"), format_ratio(num_or(c["shift"], "estimate", 0.0)),
                     format_p(num_or(c, "p_value", 0.0)));
}

std::string notes_text(const nlohmann::json& c) {
  std::string out;
  for (const auto& n : c["notes"]) out += (out.empty() ? "" : "; ") + str_or(n, "text");
  return out;
}

std::string series_trend_chart(const nlohmann::json& s) {
  std::vector<TrendPoint> points;
  for (const auto& p : s["points"])
    points.push_back({str_or(p, "started").substr(0, 10), num_or(p, "estimate", 0.0), num_or(p, "low", 0.0),
                      num_or(p, "high", 0.0)});
  std::vector<TrendSegment> segments;
  std::vector<TrendChange> changes;
  std::size_t from = 0;
  for (const auto& c : s["changes"]) {
    const std::size_t k = c["index"].get<std::size_t>();
    segments.push_back({from, k, num_or(c["before"], "median_ratio", 0.0)});
    std::string note = notes_text(c);
    if (c["runtime_change"].get<bool>() || !c["context_changes"].empty()) note = str_or(c, "explanation");
    changes.push_back({k, change_label(c), note, c["new"].get<bool>()});
    from = k;
  }
  const auto& changes_json = s["changes"];
  segments.push_back(
      {from, points.size(),
       changes_json.empty() ? 0.0 : num_or(changes_json.back()["after"], "median_ratio", 0.0)});
  if (changes_json.empty()) segments.clear();
  return trend_svg(points, segments, changes, num_or(s, "tolerance", 0.0), str_or(s, "key"));
}

std::string changes_table(const nlohmann::json& drift, bool fresh) {
  std::string rows;
  for (const ChangeRow& c : change_rows(drift, fresh)) {
    std::string notes = escape_html(c.explanation);
    for (const auto& [run, text] : c.notes)
      notes += "<br>note on " + escape_html(run) + ": " + escape_html(text);
    rows += fmt::format(
        "<tr><td>{}{}</td><td>{}<br><span class=\"meta\">{}</span></td><td>{} → {}</td><td>x{} [{}, "
        "{}]</td>"
        "<td>{}</td><td>{}</td></tr>\n",
        c.gated ? "<span class=\"new\">gated</span> " : "", escape_html(c.series), escape_html(c.run),
        escape_html(c.started), c.before, c.after, c.estimate, c.low, c.high, c.p, notes);
  }
  if (rows.empty()) return fresh ? "<p>Nothing changed since the last night.</p>\n" : "";
  return "<table><tr><th>series</th><th>from run</th><th>median ratio</th><th>shift [interval]</th><th>p</th>"
         "<th>what changed</th></tr>\n" +
         rows + "</table>\n";
}

// Several deployments in one history: each its own series, said once above the tables.
std::string deployments_note(const nlohmann::json& drift) {
  const auto d = drift_deployments(drift);
  if (d.size() < 2) return "";
  std::string names;
  for (const auto& x : d) names += (names.empty() ? "" : ", ") + escape_html(x);
  return fmt::format(
      "<p class=\"meta\">{} deployments ({}): each is its own series, a run is compared only with runs of "
      "its own deployment</p>\n",
      d.size(), names);
}

std::string series_sections(const nlohmann::json& drift) {
  std::string shown, folded;
  int folded_count = 0;
  for (const auto& s : drift["series"]) {
    const bool mix = str_or(s, "workload") == "mix";
    std::string block =
        fmt::format("<section>\n<h2>{}</h2>\n<p class=\"meta\">{} night(s), {} change point(s)</p>\n",
                    escape_html(series_label(drift, s)), s["points"].size(), s["changes"].size());
    block += series_trend_chart(s) + "\n</section>\n";
    if (mix || !s["changes"].empty()) {
      shown += block;
    } else {
      folded += block;
      ++folded_count;
    }
  }
  if (folded_count)
    shown += fmt::format("<details><summary>{} series without a change</summary>\n{}</details>\n",
                         folded_count, folded);
  return shown;
}

}  // namespace

std::string render_drift_html(const nlohmann::json& drift) {
  const auto& sum = drift["summary"];
  const auto& m = drift["method"];
  const bool changed = str_or(sum, "verdict") == "changed";
  std::string out = page_head("Timing drift", drift_style());
  out += "<h1>Timing drift across nights</h1>\n";
  out += deployments_note(drift);
  out +=
      fmt::format("<p class=\"meta\">{} parity run(s) · {} series · newest run <b>{}</b>{}</p>\n",
                  sum["runs"].get<int>(), sum["series"].get<int>(), escape_html(str_or(drift, "newest_run")),
                  str_or(drift, "since").empty() ? "" : " · since " + escape_html(str_or(drift, "since")));
  out += fmt::format(
      "<div class=\"verdict {}\"><b>{}</b> — {} change point(s), {} new since the last night, {} "
      "gated</div>\n",
      changed ? "changed" : "steady", changed ? "Changed" : "Steady", sum["changes"].get<int>(),
      sum["new_changes"].get<int>(), sum["gated_changes"].get<int>());
  out += "<h2>What changed since the last night</h2>\n" + changes_table(drift, true);
  const std::string earlier = changes_table(drift, false);
  if (!earlier.empty()) out += "<h2>Earlier change points</h2>\n" + earlier;
  out += series_sections(drift);
  out += fmt::format(
      "<footer><p>{}; {} at significance {} with {} shuffles, at least {} run(s) on each side of a change, "
      "seed {}. "
      "Shift: after/before as a Hodges–Lehmann ratio of the nightly ratios with a {} Mann–Whitney interval. "
      "A change is new when leaving out the newest run does not find it within one run of the same place.</p>"
      "</footer>\n</body>\n</html>\n",
      escape_html(str_or(m, "name")), escape_html(str_or(m, "test")), num_or(m, "significance", 0.0),
      m["permutations"].get<int>(), m["min_segment"].get<int>(), m["seed"].get<std::uint64_t>(),
      fmt::format("{:.0f} %", num_or(m, "confidence", 0.0) * 100));
  return out;
}

}  // namespace isoharness::reports
