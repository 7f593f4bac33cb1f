// What the baselines renderers share (internal to reports/): a record's numbers as text.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace isoharness::reports {

// "1.23 [1.10, 1.41]" or "-" for null.
std::string interval_cell(const nlohmann::json& interval, int digits);
// The verdict with its detail: "inconclusive (~12 more rounds)", "stale (ratio: adjust)".
std::string verdict_text(const nlohmann::json& record);
// "comparable 12 · adjust 3 · ..." in a fixed order.
std::string summary_text(const nlohmann::json& summary);
// Every change since the record as one line each: "own cell gvisor/tier at n05 (date): why; note: ...".
std::string change_text(const nlohmann::json& change);
// "95 % CI" from the document's confidence (the runs'), "CI (each record's run)" when they
// differ or it is absent: never a fixed number.
std::string ci_heading(const nlohmann::json& document);
// The compute share a record was corrected with and whose statement it is: "1 (default)",
// "0.4 (record)", "0.2 (mix reading)"; "-" when the document has none.
std::string fraction_text(const nlohmann::json& record);
// The interval the corrected duration follows (corrected / recorded): the effective ratio
// 1 - f + f x ratio, else the ratio (a document written before the compute share).
const nlohmann::json& effective_interval(const nlohmann::json& record);
// Colour of a baselines verdict.
std::string baseline_colour(const std::string& verdict);

}  // namespace isoharness::reports
