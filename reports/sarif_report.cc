// render_sarif and sarif_findings: findings located in the eval-set file, as SARIF 2.1.0
// (OASIS), which code hosts show on the lines of a pull request.
#include <fmt/format.h>

#include <cctype>
#include <map>

#include "reports/document_shape.h"
#include "reports/reports.h"
#include "reports/run_view.h"
#include "reports/text_format.h"

namespace isoharness::reports {

namespace {

constexpr std::size_t kMessageBytes = 2000;

// A relative path stays relative (to the repository root, where CI runs); an absolute one
// becomes a file:// URI. Bytes outside RFC 3986's unreserved set and '/' are %-encoded.
std::string file_uri(const std::string& path) {
  std::string out = path.starts_with("/") ? "file://" : "";
  for (const unsigned char ch : path) {
    const bool plain = std::isalnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~' || ch == '/';
    out += plain ? std::string(1, static_cast<char>(ch)) : fmt::format("%{:02X}", ch);
  }
  return out;
}

nlohmann::json location(const SarifFinding& f) {
  nlohmann::json physical = {{"artifactLocation", {{"uri", file_uri(f.file)}}}};
  if (f.line > 0) {
    physical["region"] = {{"startLine", f.line}};
    if (f.column > 0) physical["region"]["startColumn"] = f.column;
  }
  return nlohmann::json::array({{{"physicalLocation", physical}}});
}

struct Where {
  std::string file;
  int line = 0;
};

// (scenario, item id) -> the item's place in its file, from the result's plans.
std::map<std::pair<std::string, std::string>, Where> item_places(const nlohmann::json& result,
                                                                 std::map<std::string, Where>& files) {
  std::map<std::pair<std::string, std::string>, Where> out;
  if (!result.contains("plans") || !result["plans"].is_object()) return out;
  for (const auto& [scenario, plan] : result["plans"].items()) {
    if (!plan.is_object()) continue;
    if (plan.contains("scenario") && plan["scenario"].is_object())
      files[scenario] = {str_or(plan["scenario"], "path"), 0};
    if (!plan.contains("items") || !plan["items"].is_array()) continue;
    for (const auto& item : plan["items"]) {
      if (!item.is_object() || !item.contains("source") || !item["source"].is_object()) continue;
      const auto& src = item["source"];
      const int line = src.contains("line") && src["line"].is_number_integer() ? src["line"].get<int>() : 0;
      out[{scenario, str_or(item, "id")}] = {str_or(src, "file"), line};
    }
  }
  return out;
}

}  // namespace

std::string render_sarif(const std::vector<SarifFinding>& findings, const std::string& tool_version) {
  nlohmann::json rules = nlohmann::json::array(), results = nlohmann::json::array();
  std::map<std::string, int> index;
  for (const auto& f : findings) {
    if (!index.contains(f.rule_id)) {
      index[f.rule_id] = static_cast<int>(rules.size());
      rules.push_back({{"id", f.rule_id},
                       {"shortDescription", {{"text", f.rule_text.empty() ? f.rule_id : f.rule_text}}}});
    }
    nlohmann::json r = {
        {"ruleId", f.rule_id},
        {"ruleIndex", index[f.rule_id]},
        {"level", f.level},
        {"message", {{"text", truncate_text(f.message.empty() ? f.rule_id : f.message, kMessageBytes)}}}};
    if (!f.file.empty()) r["locations"] = location(f);
    results.push_back(std::move(r));
  }
  nlohmann::json driver = {{"name", "isoharness"}, {"rules", rules}};
  if (!tool_version.empty()) driver["version"] = tool_version;
  const nlohmann::json log = {
      {"version", "2.1.0"},
      {"runs", nlohmann::json::array({{{"tool", {{"driver", driver}}}, {"results", results}}})}};
  return log.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::vector<SarifFinding> sarif_findings(const nlohmann::json& result) {
  check_result_shape(result);
  const RunView run = run_view(result);
  std::map<std::string, Where> files;
  const auto places = item_places(result, files);
  auto place = [&](const std::string& scenario, const std::string& item) {
    if (const auto it = places.find({scenario, item}); it != places.end()) return it->second;
    const auto f = files.find(scenario);
    return f != files.end() ? f->second : Where{};
  };
  std::vector<SarifFinding> out;
  for (const auto& s : run.sandboxes)
    for (const auto& c : s.checks) {
      if (c.status != "fail" && c.status != "unwitnessed") continue;
      const Where w = place(s.scenario, s.item_id);
      const bool failed = c.status == "fail";
      out.push_back({failed ? "check.failed" : "check.unwitnessed",
                     failed ? "an isolation check failed on a sandbox of this item"
                            : "the evidence an isolation check needs is missing",
                     failed ? "error" : "warning",
                     fmt::format("{} {} on {}: expected {}, observed {}; {}", c.control, c.status, s.where(),
                                 truncate_text(c.expected, 300), truncate_text(c.observed, 300), c.reason),
                     w.file, w.line, 0});
    }
  for (const auto& r : run.refusals) {
    if (r.status == "pass") continue;
    const Where w = place(r.scenario, r.item_id);
    out.push_back({"refusal.not_refused", "a config the platform must refuse was not refused as required",
                   "error", fmt::format("{}: {} ({}); {}", r.scenario, r.verdict, r.answered, r.reason),
                   w.file, w.line, 0});
  }
  for (const auto& f : run.findings) {
    const Where w = place(f.scenario, f.item_id);
    const bool risk = f.severity == "known_risk";
    out.push_back({f.code, risk ? "a known risk the plan accepted" : "a finding of the plan or the platform",
                   risk ? "warning" : "note", f.message, w.file, w.line, 0});
  }
  return out;
}

}  // namespace isoharness::reports
