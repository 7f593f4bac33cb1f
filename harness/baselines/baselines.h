// baselines: is each recorded human baseline still a fair yardstick for agent runs in a
// target cell (runtime/node class) today, and if not, what is the corrected time?
//
// A researcher holds records: a person's time on a task, recorded in some cell on some
// date. For each record, from the history of parity runs:
//   * ratio: target cell / record cell, from the newest parity run (at or before the target
//     date) that timed both cells. A parity run times every cell against its baseline cell
//     B and gives each cell's mix slowdown s(cell) = cell / B with an interval; the ratio is
//     s(target) / s(record), with s(B) = 1 exactly. When neither cell is B, the interval is
//     combined in log space: each side's half-width is the root of the sum of squares of the
//     matching half-widths of the two intervals (lower: target's lower and record's upper).
//     That is the interval of a difference of independent normal errors; both slowdowns
//     share B's samples, whose error cancels in the ratio, so it is conservative (wider).
//   * mix: the record's named mix (the scenario's `mixes`) recomputed from the run's
//     samples with harness/parity (compare per workload, combine with the mix's weights);
//     the default mix is the one the parity run stored.
//   * corrected duration: duration_s x ratio, interval carried through (x low, x high).
//   * drift: change points (history drift, on each cell's stored mix series, runs up to the
//     target date) that start after recorded_at, with their annotations. A change in the
//     record's own cell means it was measured in an environment that no longer exists.
//     The parity baseline cell has no series of its own (every ratio is relative to it);
//     for it, a change counts as its own when its context change names its runtime (runc
//     for runc cells, runsc for gVisor cells).
//   * verdict, against the parity run's tolerance T, as a band [1/T, T] (a baseline that is
//     too slow is as unfair as one too fast): comparable (interval inside the band), adjust
//     (wholly outside: use the corrected duration), inconclusive (straddles a bound: about
//     how many more parity rounds would decide, rounds x (half-width / distance)^2 in log
//     space, less the rounds already run), stale (its own cell changed since it was
//     recorded; the ratio verdict is kept alongside), unknown (no parity run timed both
//     cells by the target date). Never a silent default.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/parity/parity.h"

namespace isoharness::history {
class Database;
}

namespace isoharness::baselines {

inline constexpr const char* kComparable = "comparable";
inline constexpr const char* kAdjust = "adjust";
inline constexpr const char* kInconclusive = "inconclusive";
inline constexpr const char* kStale = "stale";
inline constexpr const char* kUnknown = "unknown";
inline constexpr const char* kUnstable = "unstable";
inline constexpr const char* kSchema = "isoharness.baselines/v1";

// One record of the baseline file, as read.
struct BaselineRecord {
  int line = 0;
  std::map<std::string, std::string> fields;  // every input column, as text
  std::string task, item, human;
  double duration_s = 0;
  std::string recorded_at;   // as given
  std::string recorded_utc;  // YYYY-MM-DDTHH:MM:SSZ
  std::string runtime, node_class;
  std::string mix;  // "" = the scenario's default mix
  // The share of the task time that is sandbox compute (column compute_fraction); nullopt
  // = the assessment's default.
  std::optional<double> compute_fraction;
  // The deployment it was recorded on, "BACKEND/PROFILE" (column deployment); "" = names
  // none: --deployment, else the history's only deployment.
  std::string deployment;
  std::string cell() const { return runtime + "/" + node_class; }
};

struct BaselineFile {
  std::string path;
  std::string format;                // "csv" or "jsonl"
  std::vector<std::string> columns;  // in input order (JSON Lines: first seen order)
  std::vector<BaselineRecord> records;
};

struct ParseOptions {
  std::string now_utc;  // records after this are "in the future"
  std::string at_utc;   // the target date; records after it are refused too
  // Mix names a record may use ("default" and "" always); nullopt = not checked.
  std::optional<std::set<std::string>> mixes;
};

// Parses CSV (a header row, RFC 4180 quoting, one record per line) or JSON Lines (one
// object per line); the format is JSON Lines when the first non-blank character is '{'.
// Throws UserError listing every bad record with file, line and field: a missing column,
// a malformed value, a negative or zero duration, a date in the future or after the
// target date, a byte that is not UTF-8, an unknown mix.
BaselineFile parse_baselines(std::string_view text, const std::string& path, const ParseOptions& options);

// "2026-03-03", "2026-03-03T10:00Z", "2026-03-03T10:00:00.5+02:00", ... as
// "YYYY-MM-DDTHH:MM:SSZ"; nullopt when not ISO 8601 (a time without a zone is UTC).
std::optional<std::string> normalise_time(std::string_view text);

// "runtime/node_class" split; nullopt unless both are names ([A-Za-z0-9._-]+).
std::optional<std::pair<std::string, std::string>> parse_cell(std::string_view text);

// "BACKEND/PROFILE" (hawk/staging, local/local-2core, hawk/unknown) split; nullopt unless
// both are names. The form of a record's deployment column and of --deployment.
std::optional<std::pair<std::string, std::string>> parse_deployment(std::string_view text);

// Where a parity run ran, as the history recorded it. Runs recorded before the parity
// section carried its own provenance have the backend from the run's context and the
// deployment "unknown": they are never taken for a named deployment.
inline constexpr const char* kUnknownDeployment = "unknown";
struct Provenance {
  std::string backend = kUnknownDeployment;
  std::string deployment = kUnknownDeployment;  // the deployment profile's name
  // The runtime as the cells observed it or the profile declared it (name -> version):
  // runs are combined across nights only while this stays the same.
  std::map<std::string, std::string> runtime;
  // "backend/deployment": what "the same deployment" compares.
  std::string key() const { return backend + "/" + deployment; }
};

// One parity section of one recorded run, typed.
struct ParityRun {
  std::string run_id, started;
  Provenance provenance;
  std::string scenario, baseline;
  double tolerance = 1.10, confidence = 0.95;
  std::map<std::string, double> weights;             // the default mix, as given
  std::map<std::string, parity::Interval> slowdown;  // cell -> stored default-mix slowdown
  parity::Samples samples;
  std::optional<parity::Interval> aa;  // the baseline against its twin, when timed
  bool timed(const std::string& cell) const { return samples.count(cell) > 0; }
};

// The parity sections of one result document (isoharness.result/v1), oldest section first.
std::vector<ParityRun> parity_runs_of(const nlohmann::json& result, const std::string& run_id,
                                      const std::string& started);

// What the assessment needs from the history, read up to the target date.
struct HistoryView {
  std::vector<ParityRun> runs;  // oldest first
  nlohmann::json drift;         // isoharness.drift/v2 over the same runs
};

// The I/O seam: every parity run started at or before at_utc, and the drift document of
// the cells' mix series over the same runs (annotations included).
HistoryView read_history(const history::Database& db, const std::string& at_utc);

struct Target {
  std::string runtime, node_class, at_utc;
  std::string cell() const { return runtime + "/" + node_class; }
};

struct Mixes {
  std::map<std::string, std::map<std::string, double>> named;  // the scenario's `mixes`
  std::string scenario;                                        // its name ("" = any section)
  // A named mix's compute_fraction, when the scenario states one: used for a record of
  // that mix that states none.
  std::map<std::string, double> compute_fractions;
};

struct AssessOptions {
  // The deployment ("backend/name") whose runs judge a record that names none; "" = the
  // history's only deployment (by the target date, in the scenario), and when it holds
  // several, such a record is unknown: the default is never guessed.
  std::string deployment;
  // Also use runs of other deployments when the chosen one has none for a record; they are
  // marked "from another deployment". Off: such a record is unknown, with the reason.
  bool other_deployments = false;
  int nights = 5;  // the last runs combined per record (random effects); 1 = newest only
  // The share of a record's time that is sandbox compute when neither the record nor its
  // named mix states one.
  double compute_fraction = 1.0;
};

// The isoharness.baselines/v1 document (docs/CONTRACTS.md): every record assessed.
nlohmann::json assess(const BaselineFile& file, const HistoryView& history, const Target& target,
                      const Mixes& mixes, const AssessOptions& options = {});

// "95 % CI" from the document's confidence, or "CI (each record's run)" when the records'
// runs differ; what every report prints as the intervals' heading.
std::string ci_label(const nlohmann::json& document);

// For people: one line per record and a summary line.
std::string to_text(const nlohmann::json& document);

}  // namespace isoharness::baselines
