// Shape checks for the documents the renderers read (internal to reports/). Each check
// collects every problem with its JSON path, then throws one UserError listing them all.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

namespace isoharness::reports {

// isoharness.result/v1: schema, context, sandboxes[].checks[], findings[], summary, parity.
void check_result_shape(const nlohmann::json& result);

// The result's sandboxes in the order every report lists them: by scenario, item, runtime,
// node class, then attempt (the document keeps them in the order they finished). Call
// after check_result_shape.
std::vector<const nlohmann::json*> sandboxes_in_order(const nlohmann::json& result);

// `parity` of a result (one section or an array of sections) as a list; empty when null.
// Throws UserError when a section lacks what the renderers need.
std::vector<nlohmann::json> parity_sections(const nlohmann::json& parity);

}  // namespace isoharness::reports
