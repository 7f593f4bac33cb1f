// Nightly series: what one parity run contributes to each timing series, and the runs'
// context that annotates a change.
//
// A series is keyed "scenario/cell/workload" (the ratio candidate/baseline of one
// workload in one candidate cell) or "scenario/cell/mix" (that cell's weighted mix, the
// human-baseline slowdown). One parity run gives each series at most one point.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace isoharness::history {

inline constexpr const char* kMixWorkload = "mix";

struct SeriesPoint {
  std::string series;  // scenario/cell/workload or scenario/cell/mix
  std::string scenario, cell, workload;
  double estimate = 1, low = 1, high = 1;  // ratio candidate/baseline and its interval
  double baseline_median = 0;              // seconds; 0 for the mix
  double candidate_median = 0;
  double tolerance = 1.10;
  std::string verdict;
  // Filled when read back from the database.
  std::string run_id, started;
};

// The points of one result document's parity section(s) (an object or an array of them).
// Comparisons without a positive, finite ratio are left out. A document without parity
// gives none.
std::vector<SeriesPoint> series_points(const nlohmann::json& result);

// Where a run's timings come from, "backend/deployment" (the parity section's provenance:
// the backend and the deployment profile's name). A run recorded before sections carried
// provenance is "BACKEND/unknown" (its backend from the context, else "unknown"): such runs
// are compared only with each other, never with a named deployment.
inline constexpr const char* kUnknownDeployment = "unknown";
std::string run_deployment(const nlohmann::json& result);
// The same from a run's context block alone (no provenance there): "BACKEND/unknown".
std::string context_deployment(const nlohmann::json& context);

// "scenario/cell/workload".
std::string series_key(const std::string& scenario, const std::string& cell, const std::string& workload);

// The context fields that annotate a change, in the order they are reported: runtimes
// first (a change there is a "runtime upgrade"), then the platform, kernel, host, tool
// revision and deployment.
struct ContextField {
  const char* key;
  const char* label;
  bool runtime;
};
const std::vector<ContextField>& context_fields();

// Whether the context field `field` is the version of a runtime named `runtime` (a
// baseline's or a cell's word): `runsc` and `runsc_platform` for a gVisor runtime (a name
// holding "gvisor" or "runsc"), else the field of the runtime's own name (`runc`).
bool field_versions_runtime(const std::string& field, const std::string& runtime);

// Whether a run's context reports the harness host's runtime versions and kernel at top
// level as if they were the deployment's: a run of a backend other than local recorded
// before the context kept them under harness_host (it has no harness_host key). Such a
// context is read as it was stored, and marked.
bool context_of_harness_host(const nlohmann::json& context);

// What differs between two runs' context blocks, as {field, label, before, after, runtime,
// harness_host}. When either context is context_of_harness_host, its runc, runsc,
// runsc_platform, runsc_network and kernel differences are the harness host's:
// harness_host true, runtime false, the label saying "(harness host's)".
nlohmann::json context_changes(const nlohmann::json& before, const nlohmann::json& after);

}  // namespace isoharness::history
