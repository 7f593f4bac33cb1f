// to_text(): the baselines document for people, one line per record and a verdict line.
#include <fmt/format.h>

#include <algorithm>

#include "harness/baselines/baselines.h"

namespace isoharness::baselines {

namespace {

// Ratios with three decimals; seconds whole from 100 s on.
std::string interval_text(const nlohmann::json& i, bool seconds) {
  if (!i.is_object()) return "-";
  const auto v = [&](const char* k) {
    const double x = i[k].get<double>();
    return seconds && x >= 100 ? fmt::format("{:.0f}", x) : fmt::format("{:.3f}", x);
  };
  return fmt::format("{} [{}, {}]{}", v("estimate"), v("low"), v("high"), seconds ? " s" : "");
}

// The deployment that judged a record, when it is not the document's default (its own
// column named another): " [hawk/staging]".
std::string own_deployment(const nlohmann::json& r, const nlohmann::json& doc) {
  const auto d = r.value("deployment", nlohmann::json());
  if (!d.is_object() || !d.value("name", nlohmann::json()).is_string()) return "";
  const auto dflt = doc.value("deployment", nlohmann::json::object()).value("name", nlohmann::json());
  const std::string name = d["name"].get<std::string>();
  return dflt.is_string() && dflt.get<std::string>() == name ? "" : " [" + name + "]";
}

std::string record_line(const nlohmann::json& r, std::size_t width, const nlohmann::json& doc) {
  std::string verdict = r["verdict"].get<std::string>() + own_deployment(r, doc);
  if (!r["rounds_needed"].is_null())
    verdict += fmt::format(" (~{} more rounds)", r["rounds_needed"].get<int>());
  if (verdict == kStale) verdict += " (ratio: " + r["ratio_verdict"].get<std::string>() + ")";
  return fmt::format("{:>5}  {:<{}} {:<16} {:>8.0f} s  {:<24} {:<26} {}\n", r["line"].get<int>(),
                     r["task"].get<std::string>() + "/" + r["item"].get<std::string>(), width,
                     r["cell"].get<std::string>(), r["duration_s"].get<double>(),
                     interval_text(r["ratio"], false), interval_text(r["corrected_s"], true), verdict);
}

// The named mixes that state a compute share: each record without its own uses its mix's.
std::string mixes_line(const nlohmann::json& doc) {
  const auto it = doc.find("compute_fraction_mixes");
  if (it == doc.end() || !it->is_object() || it->empty()) return "";
  std::string out;
  for (const auto& [mix, f] : it->items())
    if (f.is_number()) out += fmt::format("{}{} {:g}", out.empty() ? "" : ", ", mix, f.get<double>());
  return "compute_fraction of named mixes (for their records that state none): " + out + "\n";
}

}  // namespace

std::string ci_label(const nlohmann::json& doc) {
  const auto it = doc.find("confidence");
  if (it == doc.end() || !it->is_number()) return "CI (each record's run)";
  return fmt::format("{:g} % CI", it->get<double>() * 100);
}

std::string to_text(const nlohmann::json& doc) {
  std::string out =
      fmt::format("baselines {} against {} at {}\n", doc["input"]["file"].get<std::string>(),
                  doc["target"]["cell"].get<std::string>(), doc["target"]["at"].get<std::string>());
  std::size_t width = 9;
  for (const auto& r : doc["records"])
    width = std::max(width, r["task"].get<std::string>().size() + 1 + r["item"].get<std::string>().size());
  width = std::min<std::size_t>(width, 48);
  out += fmt::format("{:>5}  {:<{}} {:<16} {:>10}  {:<24} {:<26} {}\n", "line", "task/item", width,
                     "recorded in", "duration", "ratio [" + ci_label(doc) + "]",
                     "corrected [" + ci_label(doc) + "]", "verdict");
  for (const auto& r : doc["records"]) {
    out += record_line(r, width, doc);
    if (r["verdict"] == kStale || r["verdict"] == kUnknown || r["verdict"] == kUnstable)
      out += "       " + r["reason"].get<std::string>() + "\n";
    for (const auto& c : r["drift"])
      if (!c["own_cell"].get<bool>())
        out += fmt::format("       target cell changed at {} ({}): {}\n", c["run"].get<std::string>(),
                           c["started"].get<std::string>(), c["explanation"].get<std::string>());
  }
  const auto& s = doc["summary"];
  out += fmt::format(
      "{} records: {} comparable, {} adjust, {} inconclusive, {} stale, {} unknown, {} unstable\n",
      s["records"].get<int>(), s[kComparable].get<int>(), s[kAdjust].get<int>(), s[kInconclusive].get<int>(),
      s[kStale].get<int>(), s[kUnknown].get<int>(), s.value(kUnstable, 0));
  if (doc.contains("deployment") && doc["deployment"].is_object())
    out += fmt::format(
        "deployment: {}; {} run(s) of other deployments left out; compute_fraction default {:g}\n",
        doc["deployment"].value("rule", "?"),
        doc["deployment"].value("runs_of_other_deployments", nlohmann::json::array()).size(),
        doc.value("compute_fraction_default", 1.0));
  out += mixes_line(doc);
  return out;
}

}  // namespace isoharness::baselines
