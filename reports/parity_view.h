// Pieces shared by the parity renderers and the run summary (internal to reports/).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace isoharness::reports {

// "✅ parity", "❌ regression", "❔ inconclusive (≈ 12 more rounds)" for a comparison or mix.
std::string verdict_label(const nlohmann::json& verdict_holder);

// "1.043 [1.012, 1.070]" from {estimate, low, high}.
std::string interval_text(const nlohmann::json& interval);

// "95 %" from a confidence in (0, 1).
std::string percent(double fraction);

// One table: scenario, cell, baseline, mix slowdown and interval, tolerance, verdict.
std::string parity_mix_table(const std::vector<nlohmann::json>& sections);

// "strict.gvisor_non-tier" — a file-name-safe stem for a scenario's cell.
std::string cell_file_stem(const std::string& scenario, const std::string& cell);

// Number from an object member, or fallback.
double num_or(const nlohmann::json& object, const char* key, double fallback);

}  // namespace isoharness::reports
