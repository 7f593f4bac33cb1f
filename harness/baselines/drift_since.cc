#include "harness/baselines/drift_since.h"

#include <algorithm>
#include <set>

#include "harness/history/series.h"

namespace isoharness::baselines {

namespace {

// The context fields a runtime's own binary shows up under (history::context_fields).
bool names_runtime(const nlohmann::json& change, const std::string& runtime) {
  for (const auto& c : change.value("context_changes", nlohmann::json::array()))
    if (c.value("harness_host", nlohmann::json()) != true &&
        history::field_versions_runtime(c.value("field", ""), runtime))
      return true;
  return false;
}

}  // namespace

nlohmann::json changes_since(const nlohmann::json& drift, const DriftQuery& q) {
  nlohmann::json out = nlohmann::json::array();
  std::set<std::string> borrowed_runs;
  for (const auto& s : drift.value("series", nlohmann::json::array())) {
    if (s.value("workload", "") != history::kMixWorkload) continue;
    if (!q.scenario.empty() && s.value("scenario", "") != q.scenario) continue;
    if (!q.deployment.empty() && s.value("deployment", "") != q.deployment) continue;
    const std::string cell = s.value("cell", "");
    const bool record_series = cell == q.record_cell;
    const bool record_is_baseline = q.record_cell == q.parity_baseline && !q.parity_baseline.empty();
    if (!record_series && cell != q.target_cell && !record_is_baseline) continue;
    for (const auto& c : s.value("changes", nlohmann::json::array())) {
      if (c.value("started", "") <= q.since_utc) continue;
      const bool own = record_series || (record_is_baseline && names_runtime(c, q.runtime));
      if (!own && cell != q.target_cell) continue;
      // The baseline cell's own change shows in every other cell's series: list it once.
      const bool borrowed = own && !record_series && cell != q.target_cell;
      if (borrowed && !borrowed_runs.insert(c.value("run", "")).second) continue;
      out.push_back({{"series", s.value("key", "")},
                     {"deployment", s.value("deployment", "")},
                     {"cell", cell},
                     {"own_cell", own},
                     {"run", c.value("run", "")},
                     {"started", c.value("started", "")},
                     {"direction", c.value("direction", "")},
                     {"shift", c.value("shift", nlohmann::json::object())},
                     {"explanation", c.value("explanation", "")},
                     {"context_changes", c.value("context_changes", nlohmann::json::array())},
                     {"notes", c.value("notes", nlohmann::json::array())}});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a["started"] < b["started"]; });
  return out;
}

}  // namespace isoharness::baselines
