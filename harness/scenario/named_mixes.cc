#include "harness/scenario/named_mixes.h"

#include <algorithm>
#include <cmath>
#include <regex>

#include "harness/scenario/source_map.h"

namespace isoharness::scenario {

namespace {

bool timed(const Scenario& s, const std::string& workload) {
  return std::any_of(s.workloads.begin(), s.workloads.end(),
                     [&](const Workload& w) { return w.name == workload; });
}

std::map<std::string, double> read_weights(const nlohmann::json& value, const std::string& p,
                                           const Scenario& s, std::vector<Diagnostic>& errors) {
  std::map<std::string, double> weights;
  if (!value.is_object() || value.empty()) {
    errors.push_back(s.scenario_source.diagnostic(p, "", "a mix is a mapping {workload: weight, ...}"));
    return weights;
  }
  double total = 0;
  for (const auto& [workload, weight] : value.items()) {
    const std::string wp = pointer_join(p, workload);
    if (!timed(s, workload)) {
      errors.push_back(s.scenario_source.diagnostic(
          wp, workload, "workload '" + workload + "' is not one of the scenario's workloads"));
    } else if (!weight.is_number() || !std::isfinite(weight.get<double>()) || weight.get<double>() < 0) {
      errors.push_back(s.scenario_source.diagnostic(wp, workload, "weight must be a number >= 0"));
    } else {
      weights[workload] = weight.get<double>();
      total += weight.get<double>();
    }
  }
  if (total <= 0 && weights.size() == value.size())
    errors.push_back(s.scenario_source.diagnostic(p, "", "a mix needs at least one positive weight"));
  return weights;
}

// The long form {weights: {...}, compute_fraction: f}: anything but those two keys is an
// error (a workload named "weights" is not a thing the short form could mean here).
void read_long_form(const std::string& name, const nlohmann::json& value, const std::string& p, Scenario& s,
                    std::vector<Diagnostic>& errors) {
  for (const auto& [key, _] : value.items())
    if (key != "weights" && key != "compute_fraction")
      errors.push_back(s.scenario_source.diagnostic(
          pointer_join(p, key), key, "a mix with `weights` takes only `weights` and `compute_fraction`"));
  s.mixes[name] = read_weights(value["weights"], pointer_join(p, "weights"), s, errors);
  if (!value.contains("compute_fraction")) return;
  const auto& f = value["compute_fraction"];
  if (!f.is_number() || !std::isfinite(f.get<double>()) || f.get<double>() < 0 || f.get<double>() > 1) {
    errors.push_back(s.scenario_source.diagnostic(pointer_join(p, "compute_fraction"), "compute_fraction",
                                                  "compute_fraction must be a number from 0 to 1"));
    return;
  }
  s.mix_compute_fractions[name] = f.get<double>();
}

}  // namespace

void read_named_mixes(const nlohmann::json& mixes, Scenario& s, std::vector<Diagnostic>& errors) {
  if (!mixes.is_object()) {
    errors.push_back(
        s.scenario_source.diagnostic("/mixes", "", "mixes must be a mapping {name: {workload: weight}}"));
    return;
  }
  static const std::regex name_re("[A-Za-z0-9][A-Za-z0-9._-]*");
  for (const auto& [name, value] : mixes.items()) {
    const std::string p = pointer_join("/mixes", name);
    if (name == kDefaultMixName) {
      errors.push_back(s.scenario_source.diagnostic(
          p, name, "'default' is reserved for the weights of `workloads`; give this mix another name"));
      continue;
    }
    if (!std::regex_match(name, name_re)) {
      errors.push_back(s.scenario_source.diagnostic(
          p, name, "a mix name is letters, digits, '.', '_' and '-', starting with a letter or digit"));
      continue;
    }
    if (value.is_object() && value.contains("weights"))
      read_long_form(name, value, p, s, errors);
    else
      s.mixes[name] = read_weights(value, p, s, errors);
  }
}

}  // namespace isoharness::scenario
