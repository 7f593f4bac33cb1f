#include "harness/history/drift.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "harness/common/error.h"
#include "harness/parity/parity.h"

namespace isoharness::history {

namespace {

struct SeriesData {
  std::string key, scenario, cell, workload, deployment;
  double tolerance = 1.10;
  std::vector<const SeriesPoint*> points;
};

bool wanted(const std::vector<std::string>& patterns, const std::string& key) {
  if (patterns.empty()) return true;
  return std::any_of(patterns.begin(), patterns.end(), [&](const auto& p) { return series_matches(p, key); });
}

// One series per key and deployment: a run is compared only with runs of its deployment.
std::vector<SeriesData> group(const std::vector<SeriesPoint>& points,
                              const std::map<std::string, RunInfo>& runs,
                              const std::string& newest_deployment, const DriftOptions& options) {
  std::map<std::pair<std::string, std::string>, SeriesData> by_key;
  for (const auto& p : points) {
    if (!wanted(options.series, p.series)) continue;
    const std::string& deployment = runs.at(p.run_id).deployment;
    auto& s = by_key[{deployment, p.series}];
    if (s.points.empty()) s = {p.series, p.scenario, p.cell, p.workload, deployment, p.tolerance, {}};
    s.tolerance = p.tolerance;  // the newest run's tolerance
    s.points.push_back(&p);
  }
  std::vector<SeriesData> out;
  out.reserve(by_key.size());
  for (auto& [key, s] : by_key) out.push_back(std::move(s));
  // The newest run's deployment first, and mixes first within it: they carry the
  // human-baseline question.
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
    const auto rank = [&](const SeriesData& s) {
      return std::pair(s.deployment != newest_deployment, s.workload != kMixWorkload);
    };
    return rank(a) < rank(b);
  });
  return out;
}

std::vector<ChangePoint> detect(const SeriesData& s, std::size_t count, const ChangePointOptions& options) {
  std::vector<double> logs;
  for (std::size_t i = 0; i < count; ++i) logs.push_back(std::log(s.points[i]->estimate));
  return find_change_points(logs, options);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

std::vector<double> ratios(const SeriesData& s, std::size_t a, std::size_t b) {
  std::vector<double> out;
  for (std::size_t i = a; i < b; ++i) out.push_back(s.points[i]->estimate);
  return out;
}

nlohmann::json segment_json(const SeriesData& s, std::size_t a, std::size_t b) {
  std::vector<double> base, cand;
  for (std::size_t i = a; i < b; ++i) {
    base.push_back(s.points[i]->baseline_median);
    cand.push_back(s.points[i]->candidate_median);
  }
  nlohmann::json out = {{"runs", b - a},
                        {"first_run", s.points[a]->run_id},
                        {"last_run", s.points[b - 1]->run_id},
                        {"median_ratio", median(ratios(s, a, b))}};
  if (s.workload != kMixWorkload) {
    out["median_baseline"] = median(base);
    out["median_candidate"] = median(cand);
  }
  return out;
}

// after/before as a Hodges–Lehmann ratio with the Mann–Whitney interval.
nlohmann::json shift_json(const SeriesData& s, std::size_t a, std::size_t k, std::size_t b,
                          double confidence) {
  const auto before = ratios(s, a, k), after = ratios(s, k, b);
  const double tolerance = s.tolerance > 1 ? s.tolerance : 1.10;
  const auto c = parity::compare(s.key, before, after, tolerance, confidence);
  return {{"estimate", c.ratio.estimate},
          {"low", c.ratio.low},
          {"high", c.ratio.high},
          {"confidence", confidence},
          {"achieved_confidence", c.achieved_confidence},
          {"method", "Hodges-Lehmann, Mann-Whitney interval"}};
}

std::string describe(const nlohmann::json& changes) {
  std::string out;
  for (const auto& c : changes) {
    if (!out.empty()) out += "; ";
    out += c["label"].get<std::string>() + ": " + c["before"].get<std::string>() + " -> " +
           c["after"].get<std::string>();
  }
  return out;
}

// What happened at the change: context differences between the series' run before it and
// its run, and the notes on every run in between (inclusive of the change's run).
void annotate(nlohmann::json& change, const SeriesData& s, std::size_t k,
              const std::map<std::string, RunInfo>& runs, const std::vector<RunInfo>& ordered) {
  const auto& prev = runs.at(s.points[k - 1]->run_id);
  const auto& cur = runs.at(s.points[k]->run_id);
  const auto diff = context_changes(prev.context, cur.context);
  bool runtime = false;
  for (const auto& d : diff) runtime = runtime || d["runtime"].get<bool>();
  nlohmann::json notes = nlohmann::json::array();
  for (const auto& r : ordered)
    if (r.started > prev.started && r.started <= cur.started)
      for (const auto& n : r.notes) notes.push_back({{"run", r.id}, {"text", n}});
  change["context_changes"] = diff;
  change["runtime_change"] = runtime;
  change["notes"] = notes;
  if (runtime)
    change["explanation"] = "coincides with a runtime change: " + describe(diff);
  else if (!diff.empty())
    change["explanation"] = "coincides with: " + describe(diff);
  else
    change["explanation"] = "no change recorded in the context";
}

bool found_near(const std::vector<ChangePoint>& old, std::size_t index) {
  return std::any_of(old.begin(), old.end(), [&](const auto& c) {
    return (c.index > index ? c.index - index : index - c.index) <= 1;
  });
}

nlohmann::json series_json(const SeriesData& s, const std::vector<ChangePoint>& found,
                           const std::vector<ChangePoint>& before_tonight, bool has_newest,
                           const std::map<std::string, RunInfo>& runs, const std::vector<RunInfo>& ordered,
                           const DriftOptions& options) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto* p : s.points)
    points.push_back({{"run", p->run_id},
                      {"started", p->started},
                      {"estimate", p->estimate},
                      {"low", p->low},
                      {"high", p->high},
                      {"baseline_median", p->baseline_median},
                      {"candidate_median", p->candidate_median},
                      {"verdict", p->verdict}});
  nlohmann::json changes = nlohmann::json::array();
  for (std::size_t i = 0; i < found.size(); ++i) {
    const std::size_t k = found[i].index;
    const std::size_t a = i ? found[i - 1].index : 0;
    const std::size_t b = i + 1 < found.size() ? found[i + 1].index : s.points.size();
    const bool is_new = has_newest && !found_near(before_tonight, k);
    nlohmann::json c = {{"series", s.key},
                        {"deployment", s.deployment},
                        {"run", s.points[k]->run_id},
                        {"started", s.points[k]->started},
                        {"index", k},
                        {"p_value", found[i].p_value},
                        {"statistic", found[i].statistic},
                        {"new", is_new},
                        {"gated", is_new && !options.gate.empty() && wanted(options.gate, s.key)},
                        {"before", segment_json(s, a, k)},
                        {"after", segment_json(s, k, b)},
                        {"shift", shift_json(s, a, k, b, options.confidence)}};
    c["direction"] = c["shift"]["estimate"].get<double>() >= 1 ? "slower" : "faster";
    annotate(c, s, k, runs, ordered);
    changes.push_back(std::move(c));
  }
  return {{"key", s.key},     {"deployment", s.deployment}, {"scenario", s.scenario},
          {"cell", s.cell},   {"workload", s.workload},     {"tolerance", s.tolerance},
          {"points", points}, {"changes", changes}};
}

nlohmann::json method_json(const DriftOptions& options) {
  const auto& o = options.change_points;
  return {{"name", "E-divisive means (energy distance, alpha = 1) on log ratios, binary segmentation"},
          {"test", "permutation test of the largest split statistic"},
          {"significance", o.significance},
          {"permutations", o.permutations},
          {"min_segment", o.min_segment},
          {"seed", o.seed},
          {"confidence", options.confidence}};
}

// Every run by id, with its deployment filled (from the context when the caller gave none),
// and a run known only from its points as one of an unknown deployment.
std::map<std::string, RunInfo> runs_by_id(const std::vector<SeriesPoint>& points,
                                          const std::vector<RunInfo>& runs) {
  std::map<std::string, RunInfo> by_id;
  for (const auto& r : runs) by_id[r.id] = r;
  for (const auto& p : points)
    if (!by_id.count(p.run_id)) by_id[p.run_id] = {p.run_id, p.started, nlohmann::json::object(), {}, ""};
  for (auto& [id, r] : by_id)
    if (r.deployment.empty()) r.deployment = context_deployment(r.context);
  return by_id;
}

nlohmann::json runs_json(const std::vector<std::string>& ids, const std::map<std::string, RunInfo>& by_id) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& id : ids) {
    const auto& r = by_id.at(id);
    out.push_back({{"id", r.id},
                   {"started", r.started},
                   {"deployment", r.deployment},
                   {"context", r.context},
                   {"context_of_harness_host", context_of_harness_host(r.context)},
                   {"notes", r.notes}});
  }
  return out;
}

}  // namespace

bool series_matches(const std::string& pattern, const std::string& key) {
  return ::fnmatch(pattern.c_str(), key.c_str(), 0) == 0;
}

nlohmann::json analyse_drift(const std::vector<SeriesPoint>& points, const std::vector<RunInfo>& runs,
                             const DriftOptions& options) {
  const auto by_id = runs_by_id(points, runs);
  std::vector<std::string> parity_runs;  // in order, each once
  for (const auto& p : points)
    if (parity_runs.empty() || parity_runs.back() != p.run_id) parity_runs.push_back(p.run_id);
  const std::string newest = parity_runs.empty() ? "" : parity_runs.back();
  const std::string newest_deployment = newest.empty() ? "" : by_id.at(newest).deployment;

  nlohmann::json doc = {{"schema", "isoharness.drift/v2"},
                        {"method", method_json(options)},
                        {"since", options.since},
                        {"series_patterns", options.series},
                        {"gate", options.gate},
                        {"newest_run", newest},
                        {"previous_run", parity_runs.size() > 1 ? parity_runs[parity_runs.size() - 2] : ""},
                        {"newest_deployment", newest_deployment},
                        {"runs", runs_json(parity_runs, by_id)},
                        {"series", nlohmann::json::array()}};
  int changes = 0, fresh = 0, gated = 0;
  nlohmann::json gated_series = nlohmann::json::array();
  std::set<std::string> deployments;
  for (const auto& s : group(points, by_id, newest_deployment, options)) {
    const auto found = detect(s, s.points.size(), options.change_points);
    const bool has_newest = s.points.back()->run_id == newest && s.points.size() > 1;
    const auto before_tonight =
        has_newest ? detect(s, s.points.size() - 1, options.change_points) : std::vector<ChangePoint>{};
    auto js = series_json(s, found, before_tonight, has_newest, by_id, runs, options);
    for (const auto& c : js["changes"]) {
      ++changes;
      if (c["new"].get<bool>()) ++fresh;
      if (c["gated"].get<bool>()) {
        ++gated;
        gated_series.push_back(s.key);
      }
    }
    deployments.insert(s.deployment);
    doc["series"].push_back(std::move(js));
  }
  doc["summary"] = {{"series", doc["series"].size()}, {"runs", parity_runs.size()},
                    {"deployments", deployments},     {"changes", changes},
                    {"new_changes", fresh},           {"gated_changes", gated},
                    {"gated_series", gated_series},   {"verdict", gated ? "changed" : "steady"}};
  return doc;
}

nlohmann::json analyse_drift(const Database& db, const DriftOptions& options) {
  std::map<std::string, std::vector<std::string>> notes;
  for (const auto& a : db.annotations()) notes[a.run_id].push_back(a.text);
  std::vector<RunInfo> runs;
  auto rows = db.runs(1000000);
  std::reverse(rows.begin(), rows.end());  // oldest first
  for (const auto& r : rows)
    if (r.started >= options.since)
      runs.push_back({r.id, r.started, r.context, notes[r.id],
                      r.kind == "parity" ? run_deployment(db.result(r.id)) : context_deployment(r.context)});
  auto doc = analyse_drift(db.points(options.since), runs, options);
  doc["posture"] = db.posture_changes();
  // A control that passed last time and fails now is a change too.
  if (!doc["posture"]["changes"].empty()) doc["summary"]["verdict"] = "changed";
  return doc;
}

}  // namespace isoharness::history
