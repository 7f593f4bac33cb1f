// Change points since a record was recorded (internal to harness/baselines): read from the
// drift document (isoharness.drift/v2) over the cells' mix series. See baselines.h.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace isoharness::baselines {

struct DriftQuery {
  std::string record_cell, target_cell, runtime;  // runtime: the record's
  std::string parity_baseline;                    // "" when no parity run was found
  std::string scenario;                           // "" = any scenario's series
  std::string since_utc;                          // recorded_at
  // Only series of this deployment ("backend/name", the drift series' "deployment"): a
  // change seen on another deployment says nothing about this one. "" = any.
  std::string deployment;
};

// [{series, deployment, cell, own_cell, run, started, direction, shift, explanation, context_changes,
//   notes}] of every change in either cell's mix series that started after since_utc,
// oldest first. own_cell is true for a change in the record's own cell.
nlohmann::json changes_since(const nlohmann::json& drift, const DriftQuery& query);

}  // namespace isoharness::baselines
