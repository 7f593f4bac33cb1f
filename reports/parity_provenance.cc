// Where a parity section's timings come from, and how a sequential run reached its
// verdicts, as the parity renderers show them. See parity_view.h.
#include <fmt/format.h>

#include <cmath>

#include "reports/parity_view.h"
#include "reports/text_format.h"

namespace isoharness::reports {

namespace {

const nlohmann::json& member(const nlohmann::json& holder, const char* key) {
  static const nlohmann::json none;
  if (!holder.is_object()) return none;
  const auto it = holder.find(key);
  return it == holder.end() ? none : *it;
}

// "runc 1.1.5, runsc release-2026…" from the provenance's runtime map, in its order.
std::string runtime_text(const nlohmann::json& runtime) {
  std::string out;
  if (!runtime.is_object()) return out;
  for (const auto& [name, version] : runtime.items()) {
    if (!version.is_string()) continue;
    std::string text = version.get<std::string>();
    // "runc version 1.1.5" as the runtime prints it: the name once.
    if (const std::string said = name + " version "; text.starts_with(said)) text = text.substr(said.size());
    out += (out.empty() ? "" : ", ") + name + " " + text;
  }
  return out;
}

std::string runtime_line(const nlohmann::json& p) {
  const std::string versions = runtime_text(member(p, "runtime"));
  const bool host_is_node = member(p, "harness_host_versions_apply") == true;
  if (host_is_node)
    return (versions.empty() ? "not recorded" : versions) + " (as found on this host, which is the node)";
  if (versions.empty())
    return "not declared by the deployment profile (the harness host's runc and runsc are not the "
           "platform's and are not shown as such)";
  return versions + " (as the deployment profile declares them; the harness host's are not the platform's)";
}

std::string node_text(const nlohmann::json& c) {
  std::string out = str_or(c, "node_name");
  if (const std::string cpus = str_or(c, "cpus_allowed"); !cpus.empty())
    out += (out.empty() ? "" : ", ") + std::string("CPUs ") + cpus;
  if (const std::string boot = str_or(c, "boot_id"); !boot.empty())
    out += (out.empty() ? "" : ", ") + std::string("boot ") + boot.substr(0, 8);
  return out.empty() ? "not seen from the sandbox" : out;
}

std::string sequential_state(const nlohmann::json& c, int max_rounds) {
  const int rounds = member(c, "rounds").is_number_integer() ? member(c, "rounds").get<int>() : 0;
  if (member(c, "decided") == true) return fmt::format("decided after {} rounds", rounds);
  if (rounds >= max_rounds) return fmt::format("undecided: the budget of {} rounds was spent", max_rounds);
  return fmt::format("undecided: stopped after {} of {} rounds (time budget or interruption)", rounds,
                     max_rounds);
}

}  // namespace

std::string confidence_text(double fraction) {
  return fmt::format("{:.3g} %", fraction * 100);
}

std::string mix_confidence_note(const nlohmann::json& mix, double section_confidence) {
  const double c = num_or(mix, "confidence", section_confidence);
  if (std::abs(c - section_confidence) < 1e-9) return "";
  return " (" + confidence_text(c) + " interval)";
}

std::string band_text(double tolerance) {
  return fmt::format("two-sided: parity when the interval lies inside [{}, {}]", format_ratio(1 / tolerance),
                     format_ratio(tolerance));
}

ProvenanceView provenance_view(const nlohmann::json& section) {
  ProvenanceView v;
  const auto& p = member(section, "provenance");
  if (!p.is_object()) return v;
  v.recorded = true;
  v.where = fmt::format("{} backend, deployment {}", str_or(p, "backend", "?"), str_or(p, "deployment", "?"));
  if (const std::string image = str_or(p, "node_image"); !image.empty()) v.where += ", node image " + image;
  v.runtime = runtime_line(p);
  const auto& cells = member(p, "cells");
  if (!cells.is_object()) return v;
  for (const auto& [name, c] : cells.items()) {
    std::string runtime = str_or(c, "runtime_class", "?");
    if (const std::string handler = str_or(c, "handler"); !handler.empty() && handler != runtime)
      runtime += " (handler " + handler + ")";
    v.cells.push_back(
        {name, str_or(c, "node_class", "?"), runtime, str_or(c, "kernel", "not seen"), node_text(c)});
  }
  return v;
}

SequentialView sequential_view(const nlohmann::json& section) {
  SequentialView v;
  const auto& s = member(section, "sequential");
  if (!s.is_object()) return v;
  v.present = true;
  const int max_rounds = member(s, "max_rounds").is_number_integer() ? member(s, "max_rounds").get<int>() : 0;
  const int batch = member(s, "batch").is_number_integer() ? member(s, "batch").get<int>() : 0;
  v.summary = fmt::format(
      "rounds added in batches of {} until each cell was decided or {} rounds were spent; each look judged "
      "at its share of the error ({} spending), {} overall",
      batch, max_rounds, str_or(s, "spending", "?"), confidence_text(num_or(s, "overall_confidence", 0.95)));
  const auto& cells = member(s, "cells");
  if (!cells.is_object()) return v;
  for (const auto& [name, c] : cells.items()) {
    v.rows.push_back({name, member(c, "rounds").is_number_integer() ? member(c, "rounds").get<int>() : 0,
                      member(c, "decided") == true, num_or(c, "confidence", 0), str_or(c, "verdict", "?"),
                      sequential_state(c, max_rounds)});
  }
  return v;
}

}  // namespace isoharness::reports
