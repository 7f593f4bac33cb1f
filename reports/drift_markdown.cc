// render_drift_markdown: the drift document for a CI step summary.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reports/drift_reports.h"
#include "reports/drift_view.h"
#include "reports/parity_view.h"
#include "reports/text_format.h"

namespace isoharness::reports {

namespace {

std::string change_table_rows(const nlohmann::json& drift, bool fresh) {
  std::string rows;
  for (const ChangeRow& c : change_rows(drift, fresh)) {
    std::string what = c.explanation;
    for (const auto& [run, text] : c.notes) what += "; note on " + run + ": " + text;
    rows +=
        fmt::format("| {}{} | {} ({}) | {} → {} | ×{} [{}, {}] | {} | {} |\n", c.gated ? "**gated** " : "",
                    escape_md_inline(c.series), escape_md_inline(c.run), escape_md_inline(c.started),
                    c.before, c.after, c.estimate, c.low, c.high, c.p, escape_md_inline(what));
  }
  if (rows.empty()) return "";
  return "| series | from run | median ratio | shift [interval] | p | what changed "
         "|\n|---|---|---|---|---|---|\n" +
         rows;
}

}  // namespace

std::string render_drift_markdown(const nlohmann::json& drift) {
  const auto& sum = drift["summary"];
  std::string out = "## What changed since the last night\n\n";
  const std::string fresh = change_table_rows(drift, true);
  out += fresh.empty() ? "No new change point in any timing series.\n" : fresh;
  const auto posture = drift.value("posture", nlohmann::json::object());
  const auto lost = posture.value("changes", nlohmann::json::array());
  if (!lost.empty()) {
    out += "\nPosture controls that passed in run " + escape_md_inline(str_or(posture, "previous_run")) +
           " and fail in run " + escape_md_inline(str_or(posture, "run")) + ":\n\n";
    for (const auto& p : lost)
      out += fmt::format("- `{}` {} {}/{}: {}\n", str_or(p, "scenario"),
                         escape_md_inline(str_or(p, "item_id")), escape_md_inline(str_or(p, "runtime")),
                         escape_md_inline(str_or(p, "node_class")), escape_md_inline(str_or(p, "control")));
  }
  const std::string earlier = change_table_rows(drift, false);
  if (!earlier.empty()) out += "\n### Earlier change points\n\n" + earlier;
  out += fmt::format(
      "\n{} parity run(s), {} series; {} change point(s), {} new, {} gated (gate: {}). Method: E-divisive "
      "means, "
      "permutation test at {}.\n",
      sum["runs"].get<int>(), sum["series"].get<int>(), sum["changes"].get<int>(),
      sum["new_changes"].get<int>(), sum["gated_changes"].get<int>(),
      drift["gate"].empty() ? std::string("none") : drift["gate"].dump(),
      num_or(drift["method"], "significance", 0.0));
  const auto deployments = drift_deployments(drift);
  if (deployments.size() > 1)
    out += fmt::format(
        "{} deployments ({}): each is its own series, a run is compared only with runs of its own "
        "deployment.\n",
        deployments.size(), escape_md_inline(fmt::format("{}", fmt::join(deployments, ", "))));
  return out;
}

}  // namespace isoharness::reports
