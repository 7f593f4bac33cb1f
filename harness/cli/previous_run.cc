// The previous run of the same scenarios and deployment, from a history, for report.html's
// "since the last run" (commands.h).
#include <algorithm>

#include "harness/cli/commands.h"
#include "harness/history/history.h"

namespace isoharness::cli {

namespace {

constexpr int kRunsLooked = 200;  // newest first; an older match is not "the last run"

std::string text_of(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<std::string> scenarios_of(const nlohmann::json& result) {
  std::vector<std::string> out;
  if (result.contains("run") && result["run"].is_object() && result["run"].contains("scenarios") &&
      result["run"]["scenarios"].is_array())
    for (const auto& s : result["run"]["scenarios"])
      if (s.is_string()) out.push_back(s.get<std::string>());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

nlohmann::json previous_run_in_history(const std::string& target, const nlohmann::json& result) {
  history::Database db(target);
  const nlohmann::json& ctx = result["context"];
  const std::string id = result.contains("run") ? text_of(result["run"], "id") : "";
  const auto scenarios = scenarios_of(result);
  for (const auto& row : db.runs(kRunsLooked)) {
    if (row.id == id || row.kind != "posture") continue;
    if (text_of(row.context, "backend") != text_of(ctx, "backend") ||
        text_of(row.context, "deployment") != text_of(ctx, "deployment"))
      continue;
    nlohmann::json doc = db.result(row.id);
    if (scenarios_of(doc) == scenarios) return doc;
  }
  return nullptr;
}

void add_report_options(CLI::App* sub, runner::SandboxCommand& command, ReportFlags flags) {
  sub->add_option(
      "--metrics", command.metrics_path,
      "Also write the run's numbers as OpenMetrics text to FILE (for a textfile collector or a push "
      "gateway)");
  if (flags == ReportFlags::metrics) return;
  sub->add_option(
      "--sarif", command.sarif_path,
      "Also write the findings (failed and unwitnessed checks, refusals not refused, known risks) as "
      "SARIF 2.1.0 to FILE, located at each item's line in its eval-set file");
  auto* previous =
      sub->add_option("--previous", command.previous_path,
                      "An earlier run's result.json: report.html then shows what changed since it");
  sub->add_option_function<std::string>(
         "--history",
         [&command](const std::string& target) {
           command.find_previous = [target](const nlohmann::json& result) {
             return previous_run_in_history(target, result);
           };
         },
         "A history (SQLite file or PostgreSQL URI) to find the previous run of the same scenarios and "
         "deployment in, for report.html's 'since the last run'; the run itself is not recorded")
      ->excludes(previous);
}

}  // namespace isoharness::cli
