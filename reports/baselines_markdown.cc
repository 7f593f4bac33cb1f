// render_baselines_markdown and render_baselines_csv: the baselines document as a
// Markdown summary and as CSV for the researchers' notebooks.
#include <fmt/format.h>

#include <algorithm>

#include "reports/baselines_reports.h"
#include "reports/baselines_view.h"
#include "reports/text_format.h"

namespace isoharness::reports {

namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string number_text(const nlohmann::json& holder, const char* a, const char* b) {
  if (!holder.contains(a) || !holder[a].is_object()) return "";
  return fmt::format("{:.6g}", holder[a][b].get<double>());
}

std::string fraction_value(const nlohmann::json& r) {
  const auto it = r.find("compute_fraction");
  if (it == r.end() || !it->is_object() || !it->contains("value") || !(*it)["value"].is_number()) return "";
  return fmt::format("{:.6g}", (*it)["value"].get<double>());
}

// The record's deployment block's name or from ("" when null or absent).
std::string deployment_of(const nlohmann::json& r, const char* key) {
  const auto it = r.find("deployment");
  return it != r.end() && it->is_object() ? str_or(*it, key) : "";
}

std::vector<std::string> new_columns(const nlohmann::json& r) {
  std::string changes;
  for (const auto& c : r["drift"]) changes += (changes.empty() ? "" : " | ") + change_text(c);
  const auto& src = r["source"];
  return {str_or(r, "target_cell"),
          str_or(r, "mix"),
          number_text(r, "ratio", "estimate"),
          number_text(r, "ratio", "low"),
          number_text(r, "ratio", "high"),
          number_text(r, "corrected_s", "estimate"),
          number_text(r, "corrected_s", "low"),
          number_text(r, "corrected_s", "high"),
          str_or(r, "verdict"),
          str_or(r, "ratio_verdict"),
          r["rounds_needed"].is_number() ? std::to_string(r["rounds_needed"].get<int>()) : "",
          src.is_object() ? str_or(src, "run") : "",
          src.is_object() ? str_or(src, "backend") : "",
          deployment_of(r, "name"),
          deployment_of(r, "from"),
          changes,
          fraction_value(r),
          r.contains("compute_fraction") && r["compute_fraction"].is_object()
              ? str_or(r["compute_fraction"], "from")
              : ""};
}

}  // namespace

std::string render_baselines_csv(const nlohmann::json& doc) {
  static const std::vector<std::string> added = {"target_cell",
                                                 "mix_used",
                                                 "ratio",
                                                 "ratio_low",
                                                 "ratio_high",
                                                 "corrected_s",
                                                 "corrected_low_s",
                                                 "corrected_high_s",
                                                 "verdict",
                                                 "ratio_verdict",
                                                 "rounds_needed",
                                                 "source_run",
                                                 "source_backend",
                                                 "deployment_used",
                                                 "deployment_from",
                                                 "changes",
                                                 "compute_fraction_used",
                                                 "compute_fraction_from"};
  const auto& columns = doc["input"]["columns"];
  std::string out;
  for (const auto& c : columns) out += csv_field(c.get<std::string>()) + ",";
  // A new column never shadows one of the input's: it is prefixed instead.
  const auto taken = [&](const std::string& name) {
    return std::any_of(columns.begin(), columns.end(), [&](const auto& c) { return c == name; });
  };
  for (std::size_t i = 0; i < added.size(); ++i)
    out += (taken(added[i]) ? "isoharness_" : "") + added[i] + (i + 1 < added.size() ? "," : "\n");
  for (const auto& r : doc["records"]) {
    for (const auto& c : columns) out += csv_field(r["fields"].value(c.get<std::string>(), "")) + ",";
    const auto values = new_columns(r);
    for (std::size_t i = 0; i < values.size(); ++i)
      out += csv_field(values[i]) + (i + 1 < values.size() ? "," : "\n");
  }
  return out;
}

std::string render_baselines_markdown(const nlohmann::json& doc) {
  const auto& t = doc["target"];
  std::string out = fmt::format("## Human baselines against {} (as of {})\n\n",
                                escape_md_inline(str_or(t, "cell")), escape_md_inline(str_or(t, "at")));
  out += fmt::format("{} records from `{}`: {}.\n\n", doc["summary"]["records"].get<int>(),
                     escape_md_inline(str_or(doc["input"], "file")), summary_text(doc["summary"]));
  if (doc.contains("deployment") && doc["deployment"].is_object())
    out += "Deployment: " + escape_md_inline(str_or(doc["deployment"], "rule")) + ".\n\n";
  out += fmt::format(
      "| line | task / item | human | recorded | cell | mix | duration | ratio [{0}] | compute share | "
      "corrected [{0}] | verdict | why |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
      ci_heading(doc));
  for (const auto& r : doc["records"])
    out += fmt::format("| {} | {} / {} | {} | {} | {} | {} | {:.0f} s | {} | {} | {} s | {} | {} |\n",
                       r["line"].get<int>(), escape_md_inline(str_or(r, "task")),
                       escape_md_inline(str_or(r, "item")), escape_md_inline(str_or(r, "human")),
                       escape_md_inline(str_or(r, "recorded_at")), escape_md_inline(str_or(r, "cell")),
                       escape_md_inline(str_or(r, "mix")), r["duration_s"].get<double>(),
                       interval_cell(r["ratio"], 3), escape_md_inline(fraction_text(r)),
                       interval_cell(r["corrected_s"], 0), escape_md_inline(verdict_text(r)),
                       escape_md_inline(str_or(r, "reason")));
  std::string drift;
  for (const auto& r : doc["records"])
    for (const auto& c : r["drift"])
      drift += fmt::format("- line {}: {}\n", r["line"].get<int>(), escape_md_inline(change_text(c)));
  if (!drift.empty()) out += "\n### Changes since each record was recorded\n\n" + drift;
  out += "\nMethod: " + escape_md_inline(str_or(doc["method"], "ratio")) + ". " +
         escape_md_inline(str_or(doc["method"], "compute_fraction")) + ". " +
         escape_md_inline(str_or(doc["method"], "verdict")) + ".\n";
  return out;
}

}  // namespace isoharness::reports
