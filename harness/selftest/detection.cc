#include "harness/selftest/detection.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "harness/common/error.h"
#include "harness/common/verdict.h"

namespace isoharness::selftest {
namespace {

using nlohmann::json;

std::string layer_of(const Weakening& w) {
  std::string layer;
  auto add = [&](const std::string& l) {
    if (layer.find(l) == std::string::npos) layer += (layer.empty() ? "" : " + ") + l;
  };
  if (w.edit_values || w.edit_item_values) add("values");
  for (const auto& b : w.backend) add(b.rfind("nft:", 0) == 0 ? "nftables" : "oci spec");
  return layer.empty() ? "-" : layer;
}

std::vector<std::string> record_weakenings(const json& record) {
  std::vector<std::string> out;
  if (record.contains("weakenings") && record["weakenings"].is_array())
    for (const auto& n : record["weakenings"])
      if (n.is_string()) out.push_back(n.get<std::string>());
  return out;
}

// What the records of one cell show: failed controls (disabled ones left out), errors.
struct Seen {
  std::set<std::string> failed;
  std::map<std::string, std::set<std::string>> judges;  // failed control -> the judges that failed it
  std::set<std::string> unwitnessed;                    // checks whose witness evidence was missing
  std::set<std::string> passed;
  std::vector<std::string> sandboxes;
  std::string error;
};

Seen collect(const json& sandboxes, const std::vector<std::string>& weakenings, const std::string& runtime,
             const std::vector<std::string>& disabled) {
  Seen seen;
  for (const auto& s : sandboxes) {
    if (s.value("runtime", std::string()) != runtime || record_weakenings(s) != weakenings) continue;
    seen.sandboxes.push_back(s.value("id", std::string()));
    if (s.contains("error") && s["error"].is_string() && seen.error.empty())
      seen.error = s["error"].get<std::string>();
    for (const auto& c : s.value("checks", json::array())) {
      std::string control = c.value("control", std::string());
      const CheckStatus status = check_status_from_label(c.value("status", std::string()));
      if (is_disabled(control, disabled)) continue;
      if (status == CheckStatus::fail) {
        seen.failed.insert(control);
        for (auto& j : judges_of(c)) seen.judges[control].insert(std::move(j));
      }
      if (status == CheckStatus::unwitnessed) seen.unwitnessed.insert(control);
      if (status == CheckStatus::pass) seen.passed.insert(control);
    }
  }
  return seen;
}

// Counts a caught cell in the runtime's and the selftest's tallies.
json mark_caught(json cell, json& summary, json& rt) {
  rt["caught"] = rt.value("caught", 0) + 1;
  summary["caught"] = summary["caught"].get<int>() + 1;
  cell["status"] = "caught";
  return cell;
}

// A weakening of the verifier's own evidence (kJudgeEvidence): caught when none of its
// controls passed (in any of the cell's sandboxes) and one at least ended unwitnessed or
// failed; missed when one passed on evidence the weakening took away.
json judge_evidence_cell(const Weakening& w, const std::string& runtime, const Seen& seen, json cell,
                         json& summary, json& rt) {
  std::vector<std::string> passed, withheld;
  for (const auto& c : w.caught_by) {
    if (seen.passed.count(c)) passed.push_back(c);
    if (seen.unwitnessed.count(c) || seen.failed.count(c)) withheld.push_back(c);
  }
  cell["judge"] = w.judge;
  cell["caught_by"] = passed.empty() ? withheld : std::vector<std::string>();
  cell["unwitnessed_controls"] = seen.unwitnessed;
  if (passed.empty() && !withheld.empty()) return mark_caught(std::move(cell), summary, rt);
  summary["missed"].push_back(w.name + " (" + runtime + ")");
  cell["status"] = "missed";
  const std::string names = fmt::format("{}", fmt::join(passed.empty() ? w.caught_by : passed, ", "));
  cell["reason"] = passed.empty() ? "none of its controls ran (" + names + ")"
                                  : "passed without the evidence the weakening took away: " + names;
  return cell;
}

json judge_cell(const Weakening& w, const std::string& runtime, const JudgeInput& in, json& summary) {
  auto na = in.not_applicable.find({w.name, runtime});
  if (na != in.not_applicable.end()) {
    summary["not_applicable"] = summary["not_applicable"].get<int>() + 1;
    return {{"status", "n/a"}, {"reason", na->second}};
  }
  Seen seen = collect(*in.sandboxes, {w.name}, runtime, in.disabled_checks);
  json cell = {{"sandboxes", seen.sandboxes}, {"failed_controls", seen.failed}};
  json& rt = summary["per_runtime"][runtime];
  rt["applicable"] = rt.value("applicable", 0) + 1;
  if (!seen.error.empty() || seen.sandboxes.size() < static_cast<std::size_t>(w.attempts)) {
    summary["errors"] = summary["errors"].get<int>() + 1;
    cell["status"] = "error";
    cell["reason"] = seen.error.empty() ? "not every attempt ran" : seen.error;
    return cell;
  }
  if (w.judge == kJudgeEvidence) return judge_evidence_cell(w, runtime, seen, std::move(cell), summary, rt);
  std::vector<std::string> catching;
  json judged = json::object();
  for (const auto& c : w.caught_by) {
    if (!seen.failed.count(c)) continue;
    judged[c] = seen.judges[c];
    if (seen.judges[c].count(w.judge)) catching.push_back(c);
  }
  cell["caught_by"] = catching;
  cell["judge"] = w.judge;
  cell["judges"] = judged;  // every catalogued control that failed, with the judges that failed it
  cell["unwitnessed_controls"] = seen.unwitnessed;
  if (catching.empty() && !seen.unwitnessed.empty()) {
    // The harness lacked the evidence to judge: neither caught nor missed.
    summary["errors"] = summary["errors"].get<int>() + 1;
    cell["status"] = "error";
    cell["reason"] = "unwitnessed: " + *seen.unwitnessed.begin() +
                     (seen.unwitnessed.size() > 1 ? " and others" : "") + " lacked witness evidence";
    return cell;
  }
  if (!catching.empty()) return mark_caught(std::move(cell), summary, rt);
  summary["missed"].push_back(w.name + " (" + runtime + ")");
  cell["status"] = "missed";
  const std::string others = fmt::format("{}", fmt::join(seen.failed, ", "));
  if (!judged.empty()) {
    cell["reason"] =
        "the catalogued controls failed, but not by its judge (" + w.judge + "): " + judged.dump();
    return cell;
  }
  cell["reason"] =
      "none of the controls the catalogue names failed" +
      (others.empty() ? std::string(" (no check failed at all)") : "; failed instead: " + others);
  return cell;
}

json judge_clean(const std::string& runtime, const JudgeInput& in, json& summary) {
  Seen seen = collect(*in.sandboxes, {}, runtime, in.disabled_checks);
  json clean = {{"runtime", runtime}, {"sandboxes", seen.sandboxes}, {"failed_controls", seen.failed}};
  if (seen.sandboxes.empty()) {
    clean["status"] = "n/a";
    auto na = in.not_applicable.find({"", runtime});
    clean["reason"] = na != in.not_applicable.end() ? na->second : "no clean sandbox ran";
  } else if (!seen.error.empty()) {
    summary["errors"] = summary["errors"].get<int>() + 1;
    clean["status"] = "error";
    clean["reason"] = seen.error;
  } else if (!seen.unwitnessed.empty()) {
    summary["errors"] = summary["errors"].get<int>() + 1;
    clean["status"] = "error";
    clean["reason"] = "unwitnessed: " + *seen.unwitnessed.begin() +
                      (seen.unwitnessed.size() > 1 ? " and others" : "") + " lacked witness evidence";
  } else if (!seen.failed.empty()) {
    summary["false_alarms"].push_back(runtime);
    clean["status"] = "false_alarm";
  } else {
    clean["status"] = "clean";
  }
  return clean;
}

}  // namespace

std::vector<std::string> judges_of(const json& check) {
  const auto status = check.find("status");
  if (status == check.end() || !status->is_string() ||
      check_status_from_label(status->get<std::string>()) != CheckStatus::fail)
    return {};
  // The judges verify put on the check (CheckResult::judges), by their labels; a label this
  // build does not know names no judge.
  std::vector<std::string> out;
  const auto judges = check.find("judges");
  if (judges == check.end() || !judges->is_array()) return out;
  for (const auto& j : *judges) {
    Judge judge;
    if (j.is_string() && judge_from_label(j.get<std::string>(), judge)) out.emplace_back(judge_label(judge));
  }
  return out;
}

bool is_disabled(const std::string& control, const std::vector<std::string>& patterns) {
  for (const auto& p : patterns) {
    if (!p.empty() && p.back() == '*' && control.rfind(p.substr(0, p.size() - 1), 0) == 0) return true;
    if (control == p) return true;
  }
  return false;
}

json judge(const JudgeInput& in) {
  ISOHARNESS_CHECK(in.sandboxes != nullptr);
  json summary = {{"caught", 0},
                  {"not_applicable", 0},
                  {"errors", 0},
                  {"missed", json::array()},
                  {"false_alarms", json::array()},
                  {"per_runtime", json::object()}};
  for (const auto& r : in.runtimes) summary["per_runtime"][r] = {{"applicable", 0}, {"caught", 0}};
  json weakenings = json::array();
  for (const Weakening* w : in.weakenings) {
    json cells = json::object();
    for (const auto& r : in.runtimes) cells[r] = judge_cell(*w, r, in, summary);
    weakenings.push_back({{"name", w->name},
                          {"what", w->what},
                          {"layer", layer_of(*w)},
                          {"backend", w->backend},
                          {"attempts", w->attempts},
                          {"caught_by", w->caught_by},
                          {"judge", w->judge},
                          {"cells", cells}});
  }
  json clean = json::array();
  for (const auto& r : in.runtimes) clean.push_back(judge_clean(r, in, summary));

  int applicable = 0;
  for (auto& [runtime, rt] : summary["per_runtime"].items()) {
    int a = rt["applicable"].get<int>();
    applicable += a;
    rt["catch_rate"] = a ? json(static_cast<double>(rt["caught"].get<int>()) / a) : json(nullptr);
  }
  summary["applicable"] = applicable;
  const bool failed = !summary["missed"].empty() || !summary["false_alarms"].empty();
  summary["verdict"] = verdict_label(verdict_from(summary["errors"].get<int>() > 0, failed));
  return {{"schema", "isoharness.selftest/v1"},
          {"runtimes", in.runtimes},
          {"disabled_checks", in.disabled_checks},
          {"weakenings", weakenings},
          {"clean", clean},
          {"summary", summary}};
}

int exit_code_of(const json& section) {
  return verdict_exit_code(verdict_from_label(section["summary"].value("verdict", std::string())));
}

}  // namespace isoharness::selftest
