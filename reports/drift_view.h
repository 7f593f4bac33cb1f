// What the drift renderers (HTML and Markdown) show of each change point, read once from
// the drift document, formatted for people and not yet escaped for either format.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace isoharness::reports {

struct ChangeRow {
  bool gated = false;  // a new change that fails the night
  std::string series, run, started;
  std::string before, after;                               // median ratios on either side
  std::string estimate, low, high, p;                      // the shift and its interval, the p-value
  std::string explanation;                                 // what changed, as the history explains it
  std::vector<std::pair<std::string, std::string>> notes;  // run, text of each annotation
};

// The change points of every series, new since the last night (fresh) or earlier.
std::vector<ChangeRow> change_rows(const nlohmann::json& drift, bool fresh);

}  // namespace isoharness::reports
