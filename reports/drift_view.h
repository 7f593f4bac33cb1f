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

// A series' name for people: its key, preceded by its deployment ("hawk/staging · key")
// when the document holds series of more than one deployment. `holder` is a series or a
// change (both carry "deployment" and the key, as "key" or "series").
std::string series_label(const nlohmann::json& drift, const nlohmann::json& holder);

// The deployments the document's series come from (summary.deployments; text only).
std::vector<std::string> drift_deployments(const nlohmann::json& drift);

// The change points of every series, new since the last night (fresh) or earlier.
std::vector<ChangeRow> change_rows(const nlohmann::json& drift, bool fresh);

}  // namespace isoharness::reports
