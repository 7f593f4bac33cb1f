// Drift across nights: change points in every series (change_points.h), each annotated
// with what changed in the runs' context and the notes people attached, as one document
// (schema isoharness.drift/v2; docs/CONTRACTS.md "History and drift").
//
// Each series is worked on as log(ratio), one value per parity run that has it. A change
// at index k splits the series into the segment before (from the previous change) and
// after (up to the next). It reports the medians of both, and the shift after/before as
// a Hodges–Lehmann ratio with the Mann–Whitney interval (harness/parity's compare on the
// two segments' ratios); its p-value is the permutation test's.
//
// "New" means new since the last night: the change is not found (within one run of the
// same place) when the newest parity run is left out. A new change in a series matching
// one of the gate patterns (default "*/mix", every cell's human-baseline mix) is "gated":
// the nightly fails on it.
//
// Like with like: a series holds the runs of one deployment only (run_deployment in
// series.h: the parity section's backend and deployment profile). The same key timed on
// two deployments (a local box and a hawk deployment, or two deployments) is two series,
// each with its "deployment"; runs recorded without provenance are "BACKEND/unknown" and
// form series of their own. Only the newest run's deployment can have new changes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/history/change_points.h"
#include "harness/history/history.h"

namespace isoharness::history {

struct DriftOptions {
  std::string since;                          // ISO 8601 date or time; empty = every run
  std::vector<std::string> series;            // glob patterns over series keys; empty = all
  std::vector<std::string> gate = {"*/mix"};  // patterns whose new changes fail the nightly
  ChangePointOptions change_points;
  double confidence = 0.95;  // of the shift's interval
};

// A run as drift sees it: when, what ran it, and the notes on it.
struct RunInfo {
  std::string id, started;
  nlohmann::json context;
  std::vector<std::string> notes;
  // "backend/deployment" (run_deployment); empty = from the context alone, "BACKEND/unknown".
  std::string deployment;
};

// The drift document from series points (ordered by run start time) and the runs they
// come from. Pure: the Database overload reads these and adds the posture changes.
nlohmann::json analyse_drift(const std::vector<SeriesPoint>& points, const std::vector<RunInfo>& runs,
                             const DriftOptions& options);
nlohmann::json analyse_drift(const Database& db, const DriftOptions& options);

// True when `key` matches the glob `pattern` (* and ? match any character, slashes too).
bool series_matches(const std::string& pattern, const std::string& key);

// For people: every change point with its annotations, the new ones first; a one-line
// verdict at the end.
std::string drift_to_text(const nlohmann::json& drift);

}  // namespace isoharness::history
