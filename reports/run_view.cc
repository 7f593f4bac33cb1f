#include "reports/run_view.h"

#include <fmt/format.h>

#include <algorithm>

#include "reports/document_shape.h"
#include "reports/text_format.h"

namespace isoharness::reports {

namespace {

int int_or(const nlohmann::json& object, const char* key, int fallback) {
  if (!object.is_object()) return fallback;
  const auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int>() : fallback;
}

std::string error_text(const nlohmann::json& sb) {
  if (!sb.contains("error") || sb["error"].is_null()) return "";
  const auto& e = sb["error"];
  if (e.is_object()) return str_or(e, "message", json_to_text(e));
  return json_to_text(e);
}

CheckView check_of(const nlohmann::json& check) {
  CheckView c;
  c.control = str_or(check, "control");
  c.family = c.control.substr(0, c.control.find(':'));
  c.status = str_or(check, "status");
  const nlohmann::json none;
  c.expected = json_to_text(check.is_object() ? check.value("expected", none) : none);
  c.observed = json_to_text(check.is_object() ? check.value("observed", none) : none);
  c.reason = str_or(check, "reason");
  c.evidence = str_or(check, "evidence");
  // The typed field verify writes (CheckResult::self_reported), never the evidence's words.
  const auto flag = check.is_object() ? check.find("self_reported") : check.end();
  c.self_reported = check.is_object() && flag != check.end() && flag->is_boolean() && flag->get<bool>();
  return c;
}

SandboxView sandbox_of(const nlohmann::json& sb) {
  SandboxView s;
  s.id = str_or(sb, "id");
  s.scenario = str_or(sb, "scenario");
  s.item_id = str_or(sb, "item_id");
  s.runtime = str_or(sb, "runtime");
  s.node_class = str_or(sb, "node_class");
  s.attempt = int_or(sb, "attempt", 0);
  s.error = error_text(sb);
  if (sb.contains("checks") && sb["checks"].is_array())
    for (const auto& check : sb["checks"]) s.checks.push_back(check_of(check));
  if (sb.contains("timings") && sb["timings"].is_object())
    for (const auto& [phase, seconds] : sb["timings"].items())
      if (seconds.is_number()) s.timings[phase] = seconds.get<double>();
  return s;
}

void count(const SandboxView& s, RunCounts& c) {
  for (const auto& check : s.checks) {
    c.pass += check.status == "pass" ? 1 : 0;
    c.fail += check.status == "fail" ? 1 : 0;
    c.na += check.status == "n/a" ? 1 : 0;
    c.unwitnessed += check.status == "unwitnessed" ? 1 : 0;
    c.self_reported += check.self_reported ? 1 : 0;
  }
  c.errors += s.error.empty() ? 0 : 1;
}

}  // namespace

std::string SandboxView::where() const {
  return fmt::format("{} · {} · {} / {} · attempt {}", scenario, item_id, runtime, node_class, attempt);
}

RunView run_view(const nlohmann::json& result) {
  RunView run;
  const auto& summary = result["summary"];
  run.verdict = str_or(summary, "verdict", "error");
  const nlohmann::json& meta = result.contains("run") ? result["run"] : nlohmann::json();
  run.run_id = str_or(meta, "id");
  if (meta.is_object() && meta.contains("scenarios") && meta["scenarios"].is_array())
    for (const auto& s : meta["scenarios"])
      if (s.is_string()) run.scenarios.push_back(s.get<std::string>());
  run.started = str_or(result["context"], "started");
  run.finished = str_or(result["context"], "finished");
  const auto ordered = sandboxes_in_order(result);
  run.refusals = refusal_rows(ordered);
  for (const auto* sb : ordered) {
    if (is_refusal_record(*sb)) continue;
    run.sandboxes.push_back(sandbox_of(*sb));
    count(run.sandboxes.back(), run.counts);
  }
  for (const auto& f : result["findings"])
    run.findings.push_back({str_or(f, "scenario"), str_or(f, "item_id", "-"), str_or(f, "code"),
                            str_or(f, "severity", "known_risk"), str_or(f, "message")});
  for (const auto* e : not_run_entries(result))
    run.not_run.push_back(not_run_where(*e) + ": " + str_or(*e, "reason", "no reason given"));
  run.counts.not_run = static_cast<int>(run.not_run.size());
  return run;
}

std::vector<std::string> check_families(const RunView& run) {
  std::vector<std::string> families;
  for (const auto& s : run.sandboxes)
    for (const auto& c : s.checks)
      if (std::find(families.begin(), families.end(), c.family) == families.end())
        families.push_back(c.family);
  return families;
}

std::string family_status(const SandboxView& sandbox, const std::string& family) {
  if (!sandbox.error.empty() && sandbox.checks.empty()) return "error";
  bool any = false, pass = false, unwitnessed = false;
  for (const auto& c : sandbox.checks) {
    if (c.family != family) continue;
    any = true;
    if (c.status == "fail") return "fail";
    unwitnessed = unwitnessed || c.status == "unwitnessed";
    pass = pass || c.status == "pass";
  }
  if (!any) return "";
  return unwitnessed ? "unwitnessed" : pass ? "pass" : "n/a";
}

}  // namespace isoharness::reports
