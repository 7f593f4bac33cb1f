// Shape checks for the documents the renderers read (internal to reports/). Each check
// collects every problem with its JSON path, then throws one UserError listing them all.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace isoharness::reports {

// isoharness.result/v1: schema, context, sandboxes[].checks[], findings[], summary, parity.
void check_result_shape(const nlohmann::json& result);

// The result's sandboxes in the order every report lists them: by scenario, item, runtime,
// node class, then attempt (the document keeps them in the order they finished). Call
// after check_result_shape.
std::vector<const nlohmann::json*> sandboxes_in_order(const nlohmann::json& result);

// The attempts a run stopped before reaching: the result's `skipped` entries marked
// not_run (scenario, item_id, runtime, node_class, attempt, reason). Both reports count
// them as errors. Plan-time skips (a runtime the config does not allow) are not among them.
std::vector<const nlohmann::json*> not_run_entries(const nlohmann::json& result);

// "scenario · item · runtime / node class · attempt N" of a not_run entry.
std::string not_run_where(const nlohmann::json& entry);

// `parity` of a result (one section or an array of sections) as a list; empty when null.
// Throws UserError when a section lacks what the renderers need.
std::vector<nlohmann::json> parity_sections(const nlohmann::json& parity);

}  // namespace isoharness::reports
