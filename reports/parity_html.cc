// render_parity_html: one self-contained page (inline CSS and SVG, no scripts, nothing
// fetched) with, per cell, the forest plot of workload ratios against the tolerance and
// the mix verdict, then the distributions of every cell's samples.
#include <fmt/format.h>

#include <algorithm>

#include "reports/document_shape.h"
#include "reports/html_page.h"
#include "reports/parity_view.h"
#include "reports/reports.h"
#include "reports/svg_charts.h"
#include "reports/text_format.h"

namespace isoharness::reports {

namespace {

std::string parity_style() {
  return page_style(
      {.max_width_px = 1120,
       .headings = "h2 { font-size: 18px; margin: 26px 0 6px; border-bottom: 1px solid #d0d7de; "
                   "padding-bottom: 4px; }\n"
                   "h2 .vs { color: #57606a; font-weight: normal; }\n",
       .verdicts = ".v-parity { background: #dafbe1; color: #116329; }\n"
                   ".v-regression { background: #ffebe9; color: #a40e26; }\n"
                   ".v-inconclusive { background: #fff8c5; color: #7d4e00; }\n",
       .cells = "th, td { padding: 3px 10px; border-bottom: 1px solid #d8dee4; text-align: right; }\n"
                "th:first-child, td:first-child { text-align: left; }\n",
       .extra = "ul.warnings { font-size: 13px; color: #7d4e00; }\n"
                "details summary { cursor: pointer; color: #0969da; font-size: 13px; }\n"});
}

std::string verdict_class(const std::string& verdict) {
  if (verdict == "parity" || verdict == "regression") return "v-" + verdict;
  if (verdict == "faster") return "v-regression";  // outside the band, like a regression
  return "v-inconclusive";
}

std::string plain_verdict(const nlohmann::json& holder) {
  // verdict_label without the emoji, for SVG text (fonts in headless browsers may lack them).
  std::string label = verdict_label(holder);
  const auto space = label.find(' ');
  return space == std::string::npos ? label : label.substr(space + 1);
}

// "inconclusive (+16 rounds)": short enough for the chart's right-hand column.
std::string short_verdict(const nlohmann::json& holder) {
  std::string out = str_or(holder, "verdict", "?");
  if (holder.contains("rounds_to_decide") && holder["rounds_to_decide"].is_number_integer()) {
    out += fmt::format(" (+{} rounds)", holder["rounds_to_decide"].get<int>());
  }
  return out;
}

std::string comparisons_table(const nlohmann::json& cell, double confidence) {
  std::string out = fmt::format(
      "<table><tr><th>workload</th><th>n baseline</th><th>n candidate</th><th>baseline "
      "median</th><th>candidate "
      "median</th><th>ratio</th><th>{} CI</th><th>p</th><th>verdict</th></tr>\n",
      percent(confidence));
  for (const auto& c : cell["comparisons"]) {
    const auto& r = c["ratio"];
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>[{}, "
        "{}]</td><td>{}</td><td>{}</td></tr>\n",
        escape_html(c["workload"].get<std::string>()), c["n_baseline"].get<int>(),
        c["n_candidate"].get<int>(), escape_html(format_seconds(num_or(c, "baseline_median", 0))),
        escape_html(format_seconds(num_or(c, "candidate_median", 0))),
        format_ratio(r["estimate"].get<double>()), format_ratio(r["low"].get<double>()),
        format_ratio(r["high"].get<double>()), escape_html(format_p(c["p_value"].get<double>())),
        escape_html(plain_verdict(c)));
  }
  out += "</table>\n";
  return out;
}

std::vector<std::string> cell_warnings(const nlohmann::json& cell) {
  std::vector<std::string> out;
  for (const auto& c : cell["comparisons"]) {
    if (c.contains("warnings") && c["warnings"].is_array()) {
      for (const auto& w : c["warnings"])
        out.push_back(c["workload"].get<std::string>() + ": " + json_to_text(w));
    }
  }
  for (const auto* src : {&cell["mix"], &cell}) {
    if (src->contains("warnings") && (*src)["warnings"].is_array()) {
      for (const auto& w : (*src)["warnings"])
        out.push_back((src == &cell ? "cell: " : "mix: ") + json_to_text(w));
    }
  }
  return out;
}

// Distributions: every workload measured under the baseline, each cell's samples
// relative to the baseline median.
std::string distributions_html(const nlohmann::json& samples, const std::string& baseline, double tol) {
  std::string out;
  std::vector<std::string> cells;
  if (samples.contains(baseline)) cells.push_back(baseline);
  for (const auto& [cell, _] : samples.items()) {
    if (cell != baseline) cells.push_back(cell);
  }
  std::vector<StripGroup> groups;
  if (samples.contains(baseline)) {
    for (const auto& [workload, times] : samples[baseline].items()) {
      std::vector<double> base = times.get<std::vector<double>>();
      if (base.empty()) continue;
      std::sort(base.begin(), base.end());
      const double median = (base[(base.size() - 1) / 2] + base[base.size() / 2]) / 2;
      StripGroup g;
      g.workload = workload;
      g.note = "baseline " + format_seconds(median);
      for (const auto& cell : cells) {
        if (!samples[cell].contains(workload)) continue;
        StripSeries series;
        series.cell = cell;
        for (const auto& t : samples[cell][workload]) series.relative.push_back(t.get<double>() / median);
        g.series.push_back(std::move(series));
      }
      groups.push_back(std::move(g));
    }
  }
  if (!groups.empty()) {
    out +=
        "<section>\n<h2>Distributions <span class=\"vs\">every round's time, relative to the baseline "
        "median</span></h2>\n";
    out += strip_svg(groups, cells, tol, "samples per workload and cell") + "\n</section>\n";
  }
  return out;
}

// Where the section's timings come from, and what each cell's sandbox saw of its node.
std::string provenance_html(const nlohmann::json& s) {
  const ProvenanceView v = provenance_view(s);
  if (!v.recorded)
    return "<p class=\"meta\">Where it ran: not recorded (a run from before parity sections carried their "
           "provenance: compared only with other such runs).</p>\n";
  std::string out = "<p class=\"meta\">Where it ran: <b>" + escape_html(v.where) + "</b> · runtime " +
                    escape_html(v.runtime) + "</p>\n";
  if (v.cells.empty()) return out;
  out +=
      "<details><summary>each cell's node</summary>\n<table><tr><th>cell</th><th>node class</th><th>runtime "
      "class</th><th>kernel the sandbox reports</th><th>node</th></tr>\n";
  for (const auto& c : v.cells)
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       escape_html(c.cell), escape_html(c.node_class), escape_html(c.runtime),
                       escape_html(c.kernel), escape_html(c.node));
  return out + "</table>\n</details>\n";
}

// A --until-decided run: how many rounds each cell needed, and whether it was decided.
std::string sequential_html(const nlohmann::json& s) {
  const SequentialView v = sequential_view(s);
  if (!v.present) return "";
  std::string out = "<p class=\"meta\">Until decided: " + escape_html(v.summary) + ".</p>\n";
  out +=
      "<table><tr><th>cell</th><th>rounds</th><th>state</th><th>look's "
      "confidence</th><th>verdict</th></tr>\n";
  for (const auto& r : v.rows)
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       escape_html(r.cell), r.rounds, escape_html(r.state),
                       escape_html(confidence_text(r.confidence)), escape_html(r.verdict));
  return out + "</table>\n";
}

std::string section_html(const nlohmann::json& s) {
  const double tol = s["tolerance"];
  const double conf = num_or(s, "confidence", 0.95);
  const std::string baseline = s["baseline"];
  std::string out;
  for (const auto& cell : s["cells"]) {
    const std::string name = cell["name"];
    const auto& mix = cell["mix"];
    out += fmt::format("<section>\n<h2>{} <span class=\"vs\">vs {}</span></h2>\n", escape_html(name),
                       escape_html(baseline));
    std::string weights;
    if (mix.contains("weights") && mix["weights"].is_object()) {
      for (const auto& [w, share] : mix["weights"].items()) {
        weights += fmt::format("{}{} {:.0f} %", weights.empty() ? "" : ", ", w, share.get<double>() * 100);
      }
    }
    out += fmt::format(
        "<div class=\"verdict {}\"><b>Human-baseline validity: {}</b> — mix slowdown {}{}{}</div>\n",
        verdict_class(mix["verdict"]), escape_html(plain_verdict(mix)), interval_text(mix["slowdown"]),
        escape_html(mix_confidence_note(mix, conf)),
        weights.empty() ? "" : " <span class=\"meta\">(weights: " + escape_html(weights) + ")</span>");
    std::vector<ForestRow> rows;
    for (const auto& c : cell["comparisons"]) {
      ForestRow r;
      r.label = c["workload"];
      r.estimate = c["ratio"]["estimate"];
      r.low = c["ratio"]["low"];
      r.high = c["ratio"]["high"];
      r.verdict = c["verdict"];
      r.right_text = interval_text(c["ratio"]) + "  " + short_verdict(c);
      rows.push_back(r);
    }
    if (mix["slowdown"].is_object()) {  // a mix without weights has no row to draw
      ForestRow m;
      m.label = "mix (weighted)";
      m.estimate = mix["slowdown"]["estimate"];
      m.low = mix["slowdown"]["low"];
      m.high = mix["slowdown"]["high"];
      m.verdict = mix["verdict"];
      m.right_text = interval_text(mix["slowdown"]) + "  " + short_verdict(mix);
      m.summary = true;
      rows.push_back(m);
    }
    out +=
        forest_svg(rows, num_or(mix, "tolerance", tol), name + " vs " + baseline + ": ratio per workload") +
        "\n";
    out += "<details><summary>numbers</summary>\n" + comparisons_table(cell, conf) + "</details>\n";
    const auto warnings = cell_warnings(cell);
    if (!warnings.empty()) {
      out += "<ul class=\"warnings\">\n";
      for (const auto& w : warnings) out += "<li>" + escape_html(w) + "</li>\n";
      out += "</ul>\n";
    }
    out += "</section>\n";
  }

  return out + distributions_html(s["samples"], baseline, tol);
}

// The run's context: the harness host. Its runtime versions are shown only where the host
// is the node (the local backend); a deployment's are in "Where it ran".
std::string context_html(const nlohmann::json& context) {
  if (!context.is_object() || context.empty()) return "";
  const std::string head = fmt::format(
      "isoharness {} (git {}) · {} {} · kernel {}", escape_html(str_or(context, "tool_version", "?")),
      escape_html(str_or(context, "git_revision", "?")),
      str_or(context, "backend", "local") == "local" ? "host" : "harness host",
      escape_html(str_or(context, "host", "?")), escape_html(str_or(context, "kernel", "?")));
  const std::string when =
      escape_html(str_or(context, "started", "?")) + " → " + escape_html(str_or(context, "finished", "?"));
  if (str_or(context, "backend", "local") != "local")
    return fmt::format("<p>{} · {} backend · {}</p>\n", head, escape_html(str_or(context, "backend", "?")),
                       when);
  return fmt::format("<p>{} · runc {} · runsc {} (platform {}, network {}) · {}</p>\n", head,
                     escape_html(str_or(context, "runc", "?")), escape_html(str_or(context, "runsc", "?")),
                     escape_html(str_or(context, "runsc_platform", "?")),
                     escape_html(str_or(context, "runsc_network", "?")), when);
}

}  // namespace

std::string render_parity_html(const nlohmann::json& parity, const nlohmann::json& context) {
  const auto sections = parity_sections(parity);
  std::string title = "Timing parity";
  if (sections.size() == 1) title += " — " + str_or(sections[0], "scenario", "");
  std::string out = page_head(escape_html(title), parity_style());
  for (const auto& s : sections) {
    const double tol = s["tolerance"];
    out += fmt::format("<h1>Timing parity — scenario <code>{}</code></h1>\n",
                       escape_html(str_or(s, "scenario", "-")));
    out += fmt::format(
        "<p class=\"meta\">Baseline <b>{}</b> · tolerance <b>{}</b> ({}) · {} confidence intervals</p>\n",
        escape_html(s["baseline"].get<std::string>()), format_tolerance(tol), escape_html(band_text(tol)),
        percent(num_or(s, "confidence", 0.95)));
    out += provenance_html(s) + sequential_html(s);
    out += section_html(s);
    const auto& cross = s.contains("getpid_crosscheck") ? s["getpid_crosscheck"] : nlohmann::json();
    if (cross.is_array() && !cross.empty()) {
      out +=
          "<section>\n<h2>getpid cross-check <span class=\"vs\">isoprobe's getpid against a static C loop, "
          "same cell and round</span></h2>\n<table>\n<tr><th>candidate</th><th>isoprobe getpid ratio</th>"
          "<th>static loop ratio</th><th>agreement</th></tr>\n";
      for (const auto& x : cross) {
        out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.3f}</td></tr>\n",
                           escape_html(str_or(x, "cell", "?")), format_ratio(num_or(x, "isoprobe_ratio", 0)),
                           format_ratio(num_or(x, "static_ratio", 0)), num_or(x, "agreement", 0));
      }
      out += "</table>\n</section>\n";
    }
  }
  out +=
      "<footer>\n<p>Per workload: ratio candidate/baseline = exp(Hodges–Lehmann shift of log times) with its "
      "distribution-free Mann–Whitney interval; p is the two-sided Mann–Whitney test. Verdicts are "
      "two-sided against the band [1/T, T]: <b>parity</b>: the whole interval lies inside it; "
      "<b>regression</b>: the whole interval is above T; <b>faster</b>: the whole interval is below 1/T "
      "(outside the band too); <b>inconclusive</b>: it straddles a bound (the estimate of more rounds needed "
      "assumes the interval narrows as 1/√rounds). Mix: weighted geometric mean of the ratios with its "
      "interval (the mix's method) — the human-baseline validity verdict.</p>\n";
  out += context_html(context);
  out += "</footer>\n</body>\n</html>\n";
  return out;
}

}  // namespace isoharness::reports
