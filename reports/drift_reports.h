// Renderers of the drift document (schema isoharness.drift/v2, made by harness/history's
// analyse_drift; docs/CONTRACTS.md "History and drift"). They read that document and
// nothing else.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace isoharness::reports {

// One self-contained page (inline CSS and SVG, no scripts, nothing fetched): what changed
// since the last night, then one trend chart per series (mixes first, then series with a
// change, the rest folded away), each change point marked and labelled with its
// annotations.
std::string render_drift_html(const nlohmann::json& drift);

// GitHub-flavoured Markdown for a CI step summary: leads with what changed since the last
// night, then every earlier change point and any posture control that stopped passing.
std::string render_drift_markdown(const nlohmann::json& drift);

}  // namespace isoharness::reports
