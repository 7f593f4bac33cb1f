#include "reports/baselines_view.h"

#include <fmt/format.h>

#include "reports/text_format.h"

namespace isoharness::reports {

std::string interval_cell(const nlohmann::json& i, int digits) {
  if (!i.is_object()) return "-";
  return fmt::format("{:.{}f} [{:.{}f}, {:.{}f}]", i["estimate"].get<double>(), digits,
                     i["low"].get<double>(), digits, i["high"].get<double>(), digits);
}

std::string verdict_text(const nlohmann::json& r) {
  std::string v = str_or(r, "verdict");
  if (r.contains("rounds_needed") && r["rounds_needed"].is_number())
    v += fmt::format(" (~{} more rounds)", r["rounds_needed"].get<int>());
  if (v == "stale") v += " (ratio: " + str_or(r, "ratio_verdict") + ")";
  return v;
}

std::string summary_text(const nlohmann::json& s) {
  std::string out;
  for (const char* k : {"comparable", "adjust", "inconclusive", "stale", "unknown", "unstable"})
    out += fmt::format("{}{} {}", out.empty() ? "" : " · ", k, s.value(k, 0));
  return out;
}

std::string ci_heading(const nlohmann::json& doc) {
  const auto it = doc.find("confidence");
  if (it == doc.end() || !it->is_number()) return "CI (each record's run)";
  return fmt::format("{:g} % CI", it->get<double>() * 100);
}

std::string change_text(const nlohmann::json& c) {
  std::string out =
      fmt::format("{} {} changed at run {} ({}), {}: {}",
                  c.value("own_cell", false) ? "own cell" : "target cell", str_or(c, "cell"),
                  str_or(c, "run"), str_or(c, "started"), str_or(c, "direction"), str_or(c, "explanation"));
  for (const auto& n : c.value("notes", nlohmann::json::array())) out += "; note: " + str_or(n, "text");
  return out;
}

std::string fraction_text(const nlohmann::json& r) {
  const auto it = r.find("compute_fraction");
  if (it == r.end() || !it->is_object()) return "-";
  const auto v = it->find("value");
  if (v == it->end() || !v->is_number()) return "-";
  std::string from = str_or(*it, "from", "?");
  if (from == "mix") from += " " + str_or(r, "mix");
  return fmt::format("{:g} ({})", v->get<double>(), from);
}

const nlohmann::json& effective_interval(const nlohmann::json& r) {
  const auto it = r.find("effective_ratio");
  if (it != r.end() && it->is_object()) return *it;
  return r["ratio"];
}

std::string baseline_colour(const std::string& verdict) {
  if (verdict == "comparable") return "#1a7f37";
  if (verdict == "adjust") return "#cf222e";
  if (verdict == "inconclusive") return "#bf8700";
  if (verdict == "stale") return "#8250df";
  return "#6e7781";
}

}  // namespace isoharness::reports
