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

// "98.7 %": a confidence with three significant digits (a sequential look's share).
std::string confidence_text(double fraction);

// Where a parity section's timings come from (its "provenance"), for people. Not
// recorded: a run from before sections carried provenance.
struct ProvenanceCell {
  std::string cell, node_class, runtime, kernel, node;
};
struct ProvenanceView {
  bool recorded = false;
  std::string where;    // "hawk backend, deployment staging, node image …"
  std::string runtime;  // the versions and whose they are (observed on the node or declared)
  std::vector<ProvenanceCell> cells;
};
ProvenanceView provenance_view(const nlohmann::json& section);

// How a `--until-decided` run reached each cell's verdict (its "sequential" block).
struct SequentialRow {
  std::string cell;
  int rounds = 0;
  bool decided = false;
  double confidence = 0;  // of the look that decided it, or of the last look
  std::string verdict, state;
};
struct SequentialView {
  bool present = false;
  std::string summary;
  std::vector<SequentialRow> rows;
};
SequentialView sequential_view(const nlohmann::json& section);

// " (98.7 % interval)" when the mix was judged at another confidence than the section's (a
// sequential look's share), else "".
std::string mix_confidence_note(const nlohmann::json& mix, double section_confidence);

// "parity: the interval inside [0.80, 1.25]" — the one two-sided band, for the headings.
std::string band_text(double tolerance);

// Number from an object member, or fallback.
double num_or(const nlohmann::json& object, const char* key, double fallback);

}  // namespace isoharness::reports
