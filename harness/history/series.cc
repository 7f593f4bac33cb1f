#include "harness/history/series.h"

#include <cmath>

namespace isoharness::history {

namespace {

double number(const nlohmann::json& holder, const char* key, double fallback) {
  if (!holder.is_object()) return fallback;
  auto it = holder.find(key);
  return it != holder.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string text(const nlohmann::json& holder, const char* key) {
  if (!holder.is_object()) return "";
  auto it = holder.find(key);
  return it != holder.end() && it->is_string() ? it->get<std::string>() : "";
}

bool usable(double ratio) {
  return std::isfinite(ratio) && ratio > 0;
}

void add_section(const nlohmann::json& section, std::vector<SeriesPoint>& out) {
  if (!section.is_object() || !section.contains("cells") || !section["cells"].is_array()) return;
  const std::string scenario = text(section, "scenario");
  const double tolerance = number(section, "tolerance", 1.10);
  for (const auto& cell : section["cells"]) {
    const std::string name = text(cell, "name");
    if (name.empty()) continue;
    for (const auto& c : cell.value("comparisons", nlohmann::json::array())) {
      const auto& r = c.value("ratio", nlohmann::json::object());
      SeriesPoint p;
      p.scenario = scenario;
      p.cell = name;
      p.workload = text(c, "workload");
      p.series = series_key(scenario, name, p.workload);
      p.estimate = number(r, "estimate", NAN);
      p.low = number(r, "low", p.estimate);
      p.high = number(r, "high", p.estimate);
      p.baseline_median = number(c, "baseline_median", 0);
      p.candidate_median = number(c, "candidate_median", 0);
      p.tolerance = number(c, "tolerance", tolerance);
      p.verdict = text(c, "verdict");
      if (!p.workload.empty() && usable(p.estimate)) out.push_back(p);
    }
    const auto& mix = cell.value("mix", nlohmann::json::object());
    const auto& s = mix.value("slowdown", nlohmann::json::object());
    SeriesPoint p;
    p.scenario = scenario;
    p.cell = name;
    p.workload = kMixWorkload;
    p.series = series_key(scenario, name, kMixWorkload);
    p.estimate = number(s, "estimate", NAN);
    p.low = number(s, "low", p.estimate);
    p.high = number(s, "high", p.estimate);
    p.tolerance = number(mix, "tolerance", tolerance);
    p.verdict = text(mix, "verdict");
    if (usable(p.estimate)) out.push_back(p);
  }
}

}  // namespace

std::string series_key(const std::string& scenario, const std::string& cell, const std::string& workload) {
  return scenario + "/" + cell + "/" + workload;
}

std::string context_deployment(const nlohmann::json& context) {
  const std::string backend = text(context, "backend");
  return (backend.empty() ? std::string(kUnknownDeployment) : backend) + "/" + kUnknownDeployment;
}

std::string run_deployment(const nlohmann::json& result) {
  if (!result.is_object()) return context_deployment(nlohmann::json());
  const auto context = result.value("context", nlohmann::json::object());
  const auto parity = result.value("parity", nlohmann::json());
  const auto sections = parity.is_array() ? parity : nlohmann::json::array({parity});
  for (const auto& s : sections) {
    const auto p = s.is_object() ? s.value("provenance", nlohmann::json()) : nlohmann::json();
    if (!p.is_object()) continue;
    const std::string backend = text(p, "backend"), name = text(p, "deployment");
    return (backend.empty() ? std::string(kUnknownDeployment) : backend) + "/" +
           (name.empty() ? std::string(kUnknownDeployment) : name);
  }
  return context_deployment(context);
}

std::vector<SeriesPoint> series_points(const nlohmann::json& result) {
  std::vector<SeriesPoint> out;
  if (!result.is_object() || !result.contains("parity")) return out;
  const auto& parity = result["parity"];
  if (parity.is_array()) {
    for (const auto& section : parity) add_section(section, out);
  } else {
    add_section(parity, out);
  }
  return out;
}

const std::vector<ContextField>& context_fields() {
  static const std::vector<ContextField> fields = {
      {"runc", "runc", true},
      {"runsc", "runsc", true},
      {"runsc_platform", "gVisor platform", true},
      {"runsc_network", "gVisor network", false},
      {"kernel", "kernel", false},
      {"host", "host", false},
      {"cpus", "CPUs", false},
      {"cpu_scaling", "CPU scaling", false},
      {"git_revision", "isoharness revision", false},
      {"backend", "backend", false},
      {"deployment", "deployment", false},
  };
  return fields;
}

bool field_versions_runtime(const std::string& field, const std::string& runtime) {
  const bool gvisor =
      runtime.find("gvisor") != std::string::npos || runtime.find("runsc") != std::string::npos;
  return gvisor ? field == "runsc" || field == "runsc_platform" : field == runtime;
}

bool harness_host_field(const std::string& field) {
  for (const char* k : {"runc", "runsc", "runsc_platform", "runsc_network", "kernel"})
    if (field == k) return true;
  return false;
}

bool context_of_harness_host(const nlohmann::json& context) {
  const std::string backend = text(context, "backend");
  return !backend.empty() && backend != "local" && !context.contains("harness_host");
}

nlohmann::json context_changes(const nlohmann::json& before, const nlohmann::json& after) {
  nlohmann::json out = nlohmann::json::array();
  if (!before.is_object() || !after.is_object()) return out;
  const bool host_side = context_of_harness_host(before) || context_of_harness_host(after);
  for (const auto& f : context_fields()) {
    auto b = before.find(f.key);
    auto a = after.find(f.key);
    if (b == before.end() || a == after.end() || *b == *a) continue;
    auto show = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
    // A run recorded before its context kept the harness host apart: these are the host's
    // versions, shown as they were read, never a runtime change of the deployment.
    const bool host = host_side && harness_host_field(f.key);
    out.push_back({{"field", f.key},
                   {"label", host ? std::string(f.label) + " (harness host's)" : std::string(f.label)},
                   {"before", show(*b)},
                   {"after", show(*a)},
                   {"runtime", f.runtime && !host},
                   {"harness_host", host}});
  }
  return out;
}

}  // namespace isoharness::history
