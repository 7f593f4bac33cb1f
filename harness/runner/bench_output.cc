#include "harness/runner/bench_output.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

namespace isoharness::runner {
namespace {

std::optional<double> unit_seconds(const std::string& unit) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1.0;
  return std::nullopt;
}

// The member's text; `fallback` when it is absent, "" when it is not a string.
std::string string_member(const nlohmann::json& row, const char* key, const char* fallback) {
  auto it = row.find(key);
  if (it == row.end()) return fallback;
  return it->is_string() ? it->get<std::string>() : "";
}

// True only for a boolean true.
bool bool_member(const nlohmann::json& row, const char* key) {
  auto it = row.find(key);
  return it != row.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace

Expected<BenchRun> parse_bench_output(std::string_view json_text) {
  auto doc = nlohmann::json::parse(json_text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return make_error("bench output is not a JSON object");
  auto it = doc.find("benchmarks");
  if (it == doc.end() || !it->is_array()) return make_error("bench output has no benchmarks array");
  BenchRun run;
  for (const auto& b : *it) {
    if (!b.is_object() || !b.contains("name") || !b["name"].is_string()) continue;
    std::string name = b["name"].get<std::string>();
    std::string workload = name.substr(0, name.find('/'));
    // json::value(key, default) throws when the member has another type: read through
    // the typed helpers, the values come from inside the sandbox.
    if (string_member(b, "run_type", "iteration") != "iteration") continue;
    if (bool_member(b, "error_occurred") || bool_member(b, "skipped")) {
      std::string why = b.contains("error_message") && b["error_message"].is_string()
                            ? b["error_message"].get<std::string>()
                            : std::string("skipped");
      run.skipped[workload] = why.substr(0, 300);
      continue;
    }
    if (!b.contains("real_time") || !b["real_time"].is_number()) continue;
    auto unit = unit_seconds(string_member(b, "time_unit", "ns"));
    double t = b["real_time"].get<double>();
    if (!unit || !std::isfinite(t) || t <= 0) {
      run.skipped[workload] = "unusable time in bench output";
      continue;
    }
    run.seconds_per_op[workload] = t * *unit;
    // Google Benchmark writes user counters as extra numeric members of the row.
    static const std::set<std::string> kStandard = {"name",
                                                    "family_index",
                                                    "per_family_instance_index",
                                                    "run_name",
                                                    "run_type",
                                                    "repetitions",
                                                    "repetition_index",
                                                    "threads",
                                                    "iterations",
                                                    "real_time",
                                                    "cpu_time",
                                                    "time_unit"};
    for (const auto& [key, value] : b.items()) {
      if (run.counters[workload].size() >= 8) break;
      if (kStandard.count(key) || !value.is_number() || key.size() > 32) continue;
      double v = value.get<double>();
      if (std::isfinite(v)) run.counters[workload][key] = v;
    }
    if (run.counters[workload].empty()) run.counters.erase(workload);
  }
  // A skip entry for a workload that also has a time is stale.
  for (const auto& [w, _] : run.seconds_per_op) run.skipped.erase(w);
  return run;
}

}  // namespace isoharness::runner
