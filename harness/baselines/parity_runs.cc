// The parity sections of a recorded result document, read into typed runs. A section
// without a baseline or samples is left out: it cannot time a cell.
#include "harness/baselines/baselines.h"

namespace isoharness::baselines {

namespace {

double number_or(const nlohmann::json& j, const char* key, double fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string text_or(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

parity::Samples samples_of(const nlohmann::json& section) {
  parity::Samples out;
  const auto it = section.find("samples");
  if (it == section.end() || !it->is_object()) return out;
  for (const auto& [cell, workloads] : it->items()) {
    if (!workloads.is_object()) continue;
    auto& into = out[cell];
    for (const auto& [workload, times] : workloads.items()) {
      if (!times.is_array()) continue;
      auto& v = into[workload];
      for (const auto& t : times)
        if (t.is_number() && t.get<double>() > 0) v.push_back(t.get<double>());
    }
  }
  return out;
}

std::string text_or_unknown(const nlohmann::json& j, const char* key) {
  const std::string t = text_or(j, key);
  return t.empty() ? kUnknownDeployment : t;
}

// The section's provenance block, else what an older run's context tells: its backend,
// and for the local backend (where the harness host is the node) the runtime versions.
Provenance provenance_of(const nlohmann::json& section, const nlohmann::json& context) {
  Provenance p;
  const auto it = section.find("provenance");
  if (it != section.end() && it->is_object()) {
    p.backend = text_or_unknown(*it, "backend");
    p.deployment = text_or_unknown(*it, "deployment");
    const auto rt = it->find("runtime");
    if (rt != it->end() && rt->is_object())
      for (const auto& [k, v] : rt->items())
        if (v.is_string()) p.runtime[k] = v.get<std::string>();
    return p;
  }
  p.backend = text_or_unknown(context, "backend");
  if (p.backend == "local")
    for (const char* k : {"runc", "runsc", "runsc_platform"})
      if (auto v = text_or(context, k); !v.empty()) p.runtime[k] = v;
  return p;
}

std::optional<ParityRun> run_of(const nlohmann::json& section, const nlohmann::json& context) {
  if (!section.is_object()) return std::nullopt;
  ParityRun r;
  r.scenario = text_or(section, "scenario");
  r.baseline = text_or(section, "baseline");
  r.tolerance = number_or(section, "tolerance", 1.10);
  r.confidence = number_or(section, "confidence", 0.95);
  r.samples = samples_of(section);
  r.provenance = provenance_of(section, context);
  if (r.baseline.empty() || !r.samples.count(r.baseline)) return std::nullopt;
  if (auto w = section.find("weights"); w != section.end() && w->is_object())
    for (const auto& [k, v] : w->items())
      if (v.is_number()) r.weights[k] = v.get<double>();
  for (const auto& cell : section.value("cells", nlohmann::json::array())) {
    if (!cell.is_object()) continue;
    const auto mix = cell.value("mix", nlohmann::json::object());
    const auto s = mix.is_object() ? mix.value("slowdown", nlohmann::json()) : nlohmann::json();
    if (!s.is_object() || !s.contains("estimate")) continue;
    const double e = number_or(s, "estimate", 0);
    if (!(e > 0)) continue;
    r.slowdown[text_or(cell, "name")] = {e, number_or(s, "low", e), number_or(s, "high", e)};
  }
  if (auto twin = r.slowdown.find(r.baseline + "#2"); twin != r.slowdown.end()) r.aa = twin->second;
  return r;
}

}  // namespace

std::vector<ParityRun> parity_runs_of(const nlohmann::json& result, const std::string& run_id,
                                      const std::string& started) {
  std::vector<ParityRun> out;
  if (!result.is_object() || !result.contains("parity")) return out;
  const auto context = result.value("context", nlohmann::json::object());
  const auto& parity = result["parity"];
  const auto add = [&](const nlohmann::json& section) {
    if (auto r = run_of(section, context.is_object() ? context : nlohmann::json::object())) {
      r->run_id = run_id;
      r->started = started;
      out.push_back(std::move(*r));
    }
  };
  if (parity.is_array())
    for (const auto& section : parity) add(section);
  else
    add(parity);
  return out;
}

}  // namespace isoharness::baselines
