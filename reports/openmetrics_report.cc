// render_openmetrics: a run's numbers as OpenMetrics text, for a Prometheus textfile
// collector or a push gateway, so an alert fires when posture or timing moves.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <tuple>

#include "reports/document_shape.h"
#include "reports/refusal_view.h"
#include "reports/reports.h"
#include "reports/run_view.h"
#include "reports/text_format.h"

namespace isoharness::reports {

namespace {

// OpenMetrics label values: backslash, double quote and line feed escaped.
std::string label(std::string_view value) {
  std::string out;
  for (const char ch : value) {
    if (ch == '\\')
      out += "\\\\";
    else if (ch == '"')
      out += "\\\"";
    else if (ch == '\n')
      out += "\\n";
    else
      out += ch;
  }
  return out;
}

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

void family(std::string& out, const char* name, const char* type, const char* unit, const char* help) {
  out += fmt::format("# TYPE {} {}\n", name, type);
  if (*unit != '\0') out += fmt::format("# UNIT {} {}\n", name, unit);
  out += fmt::format("# HELP {} {}\n", name, help);
}

// "2026-11-29T02:03:41Z" (what the context records) as seconds since the epoch; nullopt
// for anything else.
std::optional<double> epoch_seconds(const std::string& iso) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char z = 0;
  if (std::sscanf(iso.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &z) != 7 || z != 'Z')
    return std::nullopt;
  const std::chrono::year_month_day day{std::chrono::year(y), std::chrono::month(static_cast<unsigned>(mo)),
                                        std::chrono::day(static_cast<unsigned>(d))};
  if (!day.ok()) return std::nullopt;
  const auto days = std::chrono::sys_days(day).time_since_epoch().count();
  return static_cast<double>(days) * 86400 + h * 3600 + mi * 60 + s;
}

// A refusal record's checks (fail_loudly: was the config refused?) count too, so that the
// counts add up to the result's; its runtime is the record's ("-": none ran).
void count_refusal_checks(const nlohmann::json& result,
                          std::map<std::tuple<std::string, std::string, std::string>, int>& by) {
  if (!result.contains("sandboxes") || !result["sandboxes"].is_array()) return;
  for (const auto& sb : result["sandboxes"]) {
    if (!is_refusal_record(sb) || !sb.contains("checks") || !sb["checks"].is_array()) continue;
    for (const auto& c : sb["checks"])
      if (c.is_object()) ++by[{str_or(sb, "scenario"), str_or(sb, "runtime"), str_or(c, "status")}];
  }
}

void check_families(std::string& out, const RunView& run, const nlohmann::json& result) {
  std::map<std::tuple<std::string, std::string, std::string>, int> by;  // scenario, runtime, status
  for (const auto& s : run.sandboxes)
    for (const auto& c : s.checks) ++by[{s.scenario, s.runtime, c.status}];
  count_refusal_checks(result, by);
  family(out, "isoharness_checks", "counter", "", "Checks this run made, by scenario, runtime and status.");
  for (const auto& [key, n] : by)
    out += fmt::format("isoharness_checks_total{{scenario=\"{}\",runtime=\"{}\",status=\"{}\"}} {}\n",
                       label(std::get<0>(key)), label(std::get<1>(key)), label(std::get<2>(key)), n);
  const auto& c = run.counts;
  family(out, "isoharness_checks_unwitnessed", "counter", "",
         "Checks whose evidence was missing (not a verdict).");
  out += fmt::format("isoharness_checks_unwitnessed_total {}\n", c.unwitnessed);
  family(out, "isoharness_checks_self_reported", "counter", "",
         "Checks judged by the sandbox's own report, not by an outside witness.");
  out += fmt::format("isoharness_checks_self_reported_total {}\n", c.self_reported);
  family(out, "isoharness_sandboxes", "gauge", "",
         "Sandboxes by outcome: checked, could not be checked, not run.");
  out += fmt::format("isoharness_sandboxes{{outcome=\"checked\"}} {}\n", run.sandboxes.size() - c.errors);
  out += fmt::format("isoharness_sandboxes{{outcome=\"error\"}} {}\n", c.errors);
  out += fmt::format("isoharness_sandboxes{{outcome=\"not_run\"}} {}\n", c.not_run);
}

void phase_family(std::string& out, const RunView& run) {
  std::map<std::string, double> phases;
  for (const auto& s : run.sandboxes)
    for (const auto& [key, seconds] : s.timings)
      phases[key.ends_with("_s") ? key.substr(0, key.size() - 2) : key] += seconds;
  family(out, "isoharness_harness_phase_seconds", "gauge", "seconds",
         "Harness seconds per phase, summed over the run's sandboxes (total: each sandbox's whole time).");
  for (const auto& [phase, seconds] : phases)
    out +=
        fmt::format("isoharness_harness_phase_seconds{{phase=\"{}\"}} {}\n", label(phase), number(seconds));
}

void ratio_line(std::string& out, const std::string& labels, const nlohmann::json& ratio) {
  if (!ratio.is_object()) return;
  for (const char* bound : {"estimate", "low", "high"})
    if (ratio.contains(bound) && ratio[bound].is_number())
      out += fmt::format("isoharness_parity_ratio{{{},bound=\"{}\"}} {}\n", labels, bound,
                         number(ratio[bound].get<double>()));
}

void parity_family(std::string& out, const nlohmann::json& result) {
  const auto sections = parity_sections(result.contains("parity") ? result["parity"] : nlohmann::json());
  if (sections.empty()) return;
  family(out, "isoharness_parity_ratio", "gauge", "",
         "Timing ratio candidate/baseline per cell and workload (workload mix: the cell's human-baseline "
         "slowdown), "
         "with the interval's bounds.");
  for (const auto& section : sections) {
    const std::string scenario = str_or(section, "scenario");
    for (const auto& cell : section["cells"]) {
      const std::string base =
          fmt::format("scenario=\"{}\",cell=\"{}\"", label(scenario), label(str_or(cell, "name")));
      if (cell.contains("comparisons") && cell["comparisons"].is_array())
        for (const auto& c : cell["comparisons"])
          ratio_line(out, base + ",workload=\"" + label(str_or(c, "workload")) + "\"",
                     c.value("ratio", nlohmann::json()));
      if (cell.contains("mix") && cell["mix"].is_object())
        ratio_line(out, base + ",workload=\"mix\"", cell["mix"].value("slowdown", nlohmann::json()));
    }
  }
}

}  // namespace

std::string render_openmetrics(const nlohmann::json& result) {
  check_result_shape(result);
  const RunView run = run_view(result);
  std::string out;
  family(out, "isoharness_verdict", "stateset", "", "The run's verdict.");
  for (const char* v : {"pass", "fail", "error"})
    out += fmt::format("isoharness_verdict{{isoharness_verdict=\"{}\"}} {}\n", v, run.verdict == v ? 1 : 0);
  family(out, "isoharness_run", "info", "", "The run: its id and scenarios.");
  std::string scenarios;
  for (const auto& s : run.scenarios) scenarios += (scenarios.empty() ? "" : ",") + s;
  out += fmt::format("isoharness_run_info{{run_id=\"{}\",scenarios=\"{}\"}} 1\n", label(run.run_id),
                     label(scenarios));
  const auto finished = epoch_seconds(run.finished.empty() ? run.started : run.finished);
  if (finished) {
    family(out, "isoharness_run_timestamp_seconds", "gauge", "seconds", "When the run finished (Unix time).");
    out += fmt::format("isoharness_run_timestamp_seconds {}\n", number(*finished));
  }
  check_families(out, run, result);
  phase_family(out, run);
  parity_family(out, result);
  return out + "# EOF\n";
}

}  // namespace isoharness::reports
