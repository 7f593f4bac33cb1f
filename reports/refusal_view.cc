#include "reports/refusal_view.h"

#include <fmt/format.h>

#include "reports/text_format.h"

namespace isoharness::reports {

namespace {

constexpr std::size_t kAnswerBytes = 400;  // per row: a platform's message can be long

// For people: what happened, not only pass or fail.
std::string refusal_verdict(const std::string& status, bool refused) {
  if (status == "error") return "could not be submitted";
  if (status == "pass") return refused ? "refused" : "accepted, never ran";
  return refused ? "refused, not as required" : "accepted";
}

RefusalRow row_of(const nlohmann::json& sb) {
  RefusalRow row;
  row.scenario = str_or(sb, "scenario");
  row.item_id = str_or(sb, "item_id");
  if (sb["refusal"].is_object()) row.rule = str_or(sb["refusal"], "rule");
  const nlohmann::json facts =
      sb.contains("facts") && sb["facts"].is_object() ? sb["facts"] : nlohmann::json::object();
  const bool refused = facts.value("refused", false);
  row.answered = str_or(facts, "refusal_message");
  if (sb.contains("error") && !sb["error"].is_null()) {
    row.status = "error";
    row.answered = sb["error"].is_string() ? sb["error"].get<std::string>() : json_to_text(sb["error"]);
  }
  for (const auto& check : sb["checks"]) {
    if (str_or(check, "control") != "fail_loudly") continue;
    if (row.status.empty()) row.status = str_or(check, "status");
    row.expected = json_to_text(check.value("expected", nlohmann::json()));
    row.reason = str_or(check, "reason");
    row.evidence = str_or(check, "evidence");
    if (row.answered.empty()) row.answered = json_to_text(check.value("observed", nlohmann::json()));
  }
  if (row.status.empty()) row.status = "error";  // a record without its check was not judged
  row.verdict = refusal_verdict(row.status, refused);
  return row;
}

}  // namespace

bool is_refusal_record(const nlohmann::json& sandbox) {
  if (!sandbox.is_object() || !sandbox.contains("refusal")) return false;
  const auto& r = sandbox["refusal"];
  return r.is_object() || (r.is_boolean() && r.get<bool>());
}

std::vector<RefusalRow> refusal_rows(const std::vector<const nlohmann::json*>& sandboxes) {
  std::vector<RefusalRow> rows;
  for (const auto* sb : sandboxes)
    if (is_refusal_record(*sb)) rows.push_back(row_of(*sb));
  return rows;
}

std::string refusal_markdown(const std::vector<RefusalRow>& rows) {
  if (rows.empty()) return "";
  int passed = 0;
  for (const auto& r : rows) passed += r.status == "pass" ? 1 : 0;
  std::string out = fmt::format("\n### Refused as required ({} of {})\n\n", passed, rows.size());
  out +=
      "Configs the platform must refuse (\"fail loudly\"): each passes only if its submission "
      "is refused as required and no sandbox of it runs.\n\n";
  out += "| scenario | rule · reason expected | the platform answered | verdict |\n|---|---|---|---|\n";
  for (const auto& r : rows) {
    const std::string rule = r.rule.empty() ? r.expected : r.rule + " · " + r.expected;
    const char* mark = r.status == "pass" ? "✅" : (r.status == "fail" ? "❌" : "⚠️");
    out += fmt::format("| {} | {} | {} | {} {} |\n", escape_md_inline(r.scenario), escape_md_inline(rule),
                       escape_md_inline(truncate_text(r.answered, kAnswerBytes)), mark,
                       escape_md_inline(r.verdict));
  }
  return out;
}

}  // namespace isoharness::reports
