// assess(): every record of a baseline file against the history, as the
// isoharness.baselines/v1 document (docs/CONTRACTS.md). See baselines.h for the method.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "harness/baselines/baselines.h"
#include "harness/baselines/drift_since.h"
#include "harness/baselines/ratio.h"
#include "harness/history/series.h"
#include "harness/parity/nights.h"

namespace isoharness::baselines {

namespace {

struct Found {
  const ParityRun* run = nullptr;          // the newest run used
  CellRatio ratio;                         // from that run
  std::vector<const ParityRun*> runs;      // every run combined, newest first
  std::vector<parity::NightRatio> nights;  // their ratios
  parity::NightsCombined combined;
  bool other_deployment = false;
};

bool usable(const ParityRun& r, const std::string& scenario, const std::string& record_cell,
            const std::string& target_cell) {
  return (scenario.empty() || r.scenario == scenario) && r.timed(record_cell) && r.timed(target_cell);
}

// The newest run (at or before the target date: the view holds no later one) that timed
// both cells, in the scenario when one is named, of the deployment when one is given.
// Then up to `nights` runs of that run's deployment and observed runtime, newest first.
Found covering(const HistoryView& h, const BaselineRecord& rec, const std::string& target_cell,
               const std::map<std::string, double>* weights, const std::string& scenario,
               const std::string& deployment, int nights) {
  Found f;
  for (auto it = h.runs.rbegin(); it != h.runs.rend(); ++it) {
    if (!usable(*it, scenario, rec.cell(), target_cell)) continue;
    if (!deployment.empty() && it->provenance.key() != deployment) continue;
    const auto r = ratio_in(*it, rec.cell(), target_cell, weights);
    if (!r) continue;
    if (!f.run) {
      f.run = &*it;
      f.ratio = *r;
    } else if (it->provenance.key() != f.run->provenance.key() ||
               it->provenance.runtime != f.run->provenance.runtime) {
      continue;
    }
    f.runs.push_back(&*it);
    f.nights.push_back({it->run_id, r->ratio, it->confidence});
    if (static_cast<int>(f.runs.size()) >= nights) break;
  }
  if (f.run) f.combined = parity::combine_nights(f.nights, f.run->confidence);
  return f;
}

nlohmann::json interval_json(const parity::Interval& i) {
  return {{"estimate", i.estimate}, {"low", i.low}, {"high", i.high}};
}

nlohmann::json source_json(const Found& f, const std::string& mix) {
  const auto& r = *f.run;
  return {{"run", r.run_id},
          {"started", r.started},
          {"backend", r.provenance.backend},
          {"deployment", r.provenance.deployment},
          {"from_another_deployment", f.other_deployment},
          {"runtime", r.provenance.runtime},
          {"scenario", r.scenario},
          {"parity_baseline", r.baseline},
          {"tolerance", r.tolerance},
          {"confidence", r.confidence},
          {"rounds", f.ratio.rounds},
          {"mix", mix.empty() ? "default" : mix},
          {"weights", mix.empty() ? r.weights : f.ratio.weights},
          {"record_slowdown", interval_json(f.ratio.record_slowdown)},
          {"target_slowdown", interval_json(f.ratio.target_slowdown)},
          {"ratio", interval_json(f.ratio.ratio)}};
}

nlohmann::json nights_json(const Found& f) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& n : f.nights) runs.push_back({{"run", n.run_id}, {"ratio", interval_json(n.ratio)}});
  std::vector<std::optional<parity::Interval>> aa;
  for (const auto* r : f.runs) aa.push_back(r->aa);
  const parity::AaStability s = parity::aa_stability(aa, f.run->tolerance);
  return {{"runs", runs},
          {"count", f.nights.size()},
          {"method", parity::kNightsMethod},
          {"between_nights_known", f.combined.between_nights_known},
          {"tau2", f.combined.tau2},
          {"within_only", interval_json(f.combined.within_only)},
          {"warnings", f.combined.warnings},
          {"aa",
           {{"nights", s.nights},
            {"spread", s.spread ? nlohmann::json(*s.spread) : nlohmann::json(nullptr)},
            {"unstable", s.unstable},
            {"reason", s.reason}}}};
}

std::string stale_reason(const BaselineRecord& rec, const nlohmann::json& own) {
  std::string why = own.value("explanation", "");
  for (const auto& n : own.value("notes", nlohmann::json::array()))
    why += (why.empty() ? "" : "; ") + std::string("note: ") + n.value("text", "");
  return fmt::format("its cell {} changed at run {} ({}) after it was recorded on {}: {}", rec.cell(),
                     own.value("run", ""), own.value("started", ""), rec.recorded_at, why);
}

// The time a person would take in the target cell when a share f of it is sandbox compute:
// the rest (reading, thinking) does not scale with the runtime.
parity::Interval effective(const parity::Interval& ratio, double f) {
  return {1 - f + f * ratio.estimate, 1 - f + f * ratio.low, 1 - f + f * ratio.high};
}

std::string band_reason(const std::string& verdict, double tolerance) {
  if (verdict == kComparable)
    return fmt::format("the effective ratio's interval lies inside [1/{0:.2f}, {0:.2f}]", tolerance);
  if (verdict == kAdjust)
    return fmt::format(
        "the effective ratio's interval lies wholly outside [1/{0:.2f}, {0:.2f}]: use the corrected duration",
        tolerance);
  return fmt::format("the effective ratio's interval straddles a bound of [1/{0:.2f}, {0:.2f}]", tolerance);
}

struct Judged {
  const BaselineRecord& rec;
  const Found& f;
  bool same_cell;
  double fraction;
  std::string unknown_reason;
  std::string runtime_change;  // "" = none seen in the runs' provenance
};

bool concerns(const std::string& runtime, const std::string& field) {
  return field == "node_image" || history::field_versions_runtime(field, runtime);
}

// What change-point detection cannot see (a change in the last nights, fewer than a
// segment's worth of runs after it, or one before the history begins), the runs'
// provenance can: the runtime the record's deployment ran at its recording against the
// newest run's. Also warns when the record predates every run of the deployment.
std::string runtime_since(const HistoryView& h, const BaselineRecord& rec, const Found& f,
                          std::vector<std::string>& warnings) {
  if (!f.run) return "";
  const ParityRun* then = nullptr;
  for (const auto& r : h.runs)
    if (r.started <= rec.recorded_utc && r.provenance.key() == f.run->provenance.key()) then = &r;
  if (!then) {
    warnings.push_back(
        fmt::format("recorded before the first run of {} in the history: a change between its "
                    "recording and that run cannot be seen",
                    f.run->provenance.key()));
    return "";
  }
  std::string out;
  const auto& a = then->provenance.runtime;
  const auto& b = f.run->provenance.runtime;
  std::set<std::string> fields;
  for (const auto& [k, _] : a) fields.insert(k);
  for (const auto& [k, _] : b) fields.insert(k);
  for (const auto& k : fields) {
    const std::string x = a.count(k) ? a.at(k) : "?", y = b.count(k) ? b.at(k) : "?";
    if (x != y && concerns(rec.runtime, k))
      out += fmt::format("{}{}: {} -> {}", out.empty() ? "" : "; ", k, x, y);
  }
  return out;
}

// Fills ratio, corrected, verdict and reason from what was found.
void judge(nlohmann::json& out, const Judged& j, const nlohmann::json& drift) {
  out["rounds_needed"] = nullptr;
  const nlohmann::json* own = nullptr;
  for (const auto& c : drift)
    if (c["own_cell"].get<bool>() && !own) own = &c;
  if (!j.f.run && !j.same_cell) {
    out["verdict"] = kUnknown;
    out["ratio_verdict"] = kUnknown;
    out["reason"] = j.unknown_reason;
    return;
  }
  const parity::Interval ratio = j.same_cell ? parity::Interval{1, 1, 1} : j.f.combined.ratio;
  const parity::Interval eff = effective(ratio, j.fraction);
  const double tolerance = j.f.run ? j.f.run->tolerance : 1.10;
  const double d = j.rec.duration_s;
  out["ratio"] = interval_json(ratio);
  out["effective_ratio"] = interval_json(eff);
  out["corrected_s"] = interval_json({d * eff.estimate, d * eff.low, d * eff.high});
  out["tolerance"] = tolerance;
  const std::string verdict = band_verdict(eff, tolerance);
  out["ratio_verdict"] = verdict;
  if (verdict == kInconclusive && j.f.run)
    if (auto n = more_rounds(eff, tolerance, j.f.ratio.rounds)) out["rounds_needed"] = *n;
  const bool unstable = j.f.run && out["nights"]["aa"]["unstable"].get<bool>();
  const bool changed = !own && !j.runtime_change.empty();
  out["verdict"] = own || changed ? kStale : unstable ? kUnstable : verdict;
  if (own)
    out["reason"] = stale_reason(j.rec, *own);
  else if (changed)
    out["reason"] = fmt::format(
        "its cell {}'s runtime changed since it was recorded on {} ({}, from the runs' "
        "provenance; too recent or too early for change-point detection)",
        j.rec.cell(), j.rec.recorded_at, j.runtime_change);
  else if (unstable)
    out["reason"] = "the runs' A/A noise exceeds the tolerance (" +
                    out["nights"]["aa"]["reason"].get<std::string>() + "): no verdict";
  else
    out["reason"] = band_reason(verdict, tolerance);
}

std::string runs_elsewhere(const HistoryView& h, const BaselineRecord& rec, const std::string& target_cell,
                           const std::string& scenario, const std::string& deployment) {
  std::set<std::string> other;
  for (const auto& r : h.runs)
    if (usable(r, scenario, rec.cell(), target_cell) && r.provenance.key() != deployment)
      other.insert(r.provenance.key());
  return fmt::format("{}", fmt::join(other, ", "));
}

// Where the ratio comes from: the chosen deployment's runs, else (with the flag) any.
Found find_runs(const BaselineRecord& rec, const HistoryView& h, const Target& target, const Mixes& mixes,
                const AssessOptions& o, const std::string& deployment, std::string& unknown_reason) {
  const auto named = rec.mix.empty() ? mixes.named.end() : mixes.named.find(rec.mix);
  const std::map<std::string, double>* weights = named == mixes.named.end() ? nullptr : &named->second;
  Found f = covering(h, rec, target.cell(), weights, mixes.scenario, deployment, o.nights);
  if (f.run) return f;
  const std::string elsewhere = runs_elsewhere(h, rec, target.cell(), mixes.scenario, deployment);
  unknown_reason = fmt::format("no parity run of deployment {} by the target date timed both {} and {}",
                               deployment, rec.cell(), target.cell());
  if (elsewhere.empty()) return f;
  if (!o.other_deployments) {
    unknown_reason += fmt::format(" (runs of {} did; --other-deployments uses them, marked so)", elsewhere);
    return f;
  }
  f = covering(h, rec, target.cell(), weights, mixes.scenario, "", o.nights);
  f.other_deployment = true;
  return f;
}

// The deployments the history holds by the target date (in the scenario, when one is named).
std::set<std::string> deployments_of(const HistoryView& h, const std::string& scenario) {
  std::set<std::string> out;
  for (const auto& r : h.runs)
    if (scenario.empty() || r.scenario == scenario) out.insert(r.provenance.key());
  return out;
}

std::string listed(const std::set<std::string>& names) {
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

std::string several(const std::set<std::string>& held) {
  return fmt::format(
      "the history holds runs of {} deployments ({}): choose one with --deployment BACKEND/PROFILE or the "
      "record's deployment column (a deployment field in JSON Lines)",
      held.size(), listed(held));
}

// The deployment a record is judged against and who chose it: its own column, else
// --deployment, else the history's only deployment. A name no run of the history has, or
// a history of several deployments with none named, leaves it unresolved (reason set).
struct Chosen {
  std::string name, from, reason;
  bool resolved() const { return reason.empty(); }
};
inline constexpr const char* kFromRecord = "record";
inline constexpr const char* kFromFlag = "--deployment";
inline constexpr const char* kFromOnly = "the only deployment in the history";

Chosen choose_deployment(const BaselineRecord& rec, const std::set<std::string>& held,
                         const AssessOptions& o) {
  if (!rec.deployment.empty()) {
    if (held.count(rec.deployment)) return {rec.deployment, kFromRecord, ""};
    return {rec.deployment, kFromRecord,
            fmt::format("the record names deployment {}, which has no parity run in the history by the "
                        "target date (the history holds: {})",
                        rec.deployment, listed(held))};
  }
  if (!o.deployment.empty()) return {o.deployment, kFromFlag, ""};
  if (held.size() == 1) return {*held.begin(), kFromOnly, ""};
  if (held.empty()) return {"", "", "no parity run in the history by the target date"};
  return {"", "", "the record names no deployment and " + several(held)};
}

nlohmann::json chosen_json(const Chosen& c) {
  return {{"name", c.name.empty() ? nlohmann::json() : nlohmann::json(c.name)},
          {"from", c.from.empty() ? nlohmann::json() : nlohmann::json(c.from)},
          {"resolved", c.resolved()}};
}

nlohmann::json record_head(const BaselineRecord& rec, const Target& target) {
  return {{"line", rec.line},
          {"fields", rec.fields},
          {"task", rec.task},
          {"item", rec.item},
          {"human", rec.human},
          {"duration_s", rec.duration_s},
          {"recorded_at", rec.recorded_at},
          {"recorded_utc", rec.recorded_utc},
          {"cell", rec.cell()},
          {"target_cell", target.cell()},
          {"mix", rec.mix.empty() ? "default" : rec.mix},
          {"ratio", nullptr},
          {"effective_ratio", nullptr},
          {"corrected_s", nullptr},
          {"tolerance", nullptr},
          {"source", nullptr},
          {"nights", nullptr}};
}

// The share of the record's time that is sandbox compute, and whose statement it is: the
// record's own, else its named mix's (the scenario's), else the assessment's default.
std::pair<double, std::string> fraction_of(const BaselineRecord& rec, const Mixes& mixes,
                                           const AssessOptions& o) {
  if (rec.compute_fraction) return {*rec.compute_fraction, "record"};
  if (auto it = mixes.compute_fractions.find(rec.mix);
      !rec.mix.empty() && it != mixes.compute_fractions.end())
    return {it->second, "mix"};
  return {o.compute_fraction, "default"};
}

nlohmann::json assess_record(const BaselineRecord& rec, const HistoryView& h, const Target& target,
                             const Mixes& mixes, const AssessOptions& o, const Chosen& chosen) {
  const bool same_cell = chosen.resolved() && rec.cell() == target.cell();
  std::string unknown_reason = chosen.reason;
  const Found f = same_cell || !chosen.resolved()
                      ? Found{}
                      : find_runs(rec, h, target, mixes, o, chosen.name, unknown_reason);
  nlohmann::json out = record_head(rec, target);
  out["deployment"] = chosen_json(chosen);
  const auto [fraction, from] = fraction_of(rec, mixes, o);
  out["compute_fraction"] = {{"value", fraction}, {"from", from}};
  out["combination"] = same_cell ? "same cell: ratio 1 by definition" : f.run ? f.ratio.combination : "";
  if (f.run) {
    out["source"] = source_json(f, rec.mix);
    out["nights"] = nights_json(f);
  }
  DriftQuery q{rec.cell(),
               target.cell(),
               rec.runtime,
               f.run ? f.run->baseline : "",
               mixes.scenario,
               rec.recorded_utc,
               f.run ? f.run->provenance.key() : chosen.name};
  if (q.parity_baseline.empty() && !h.runs.empty()) q.parity_baseline = h.runs.back().baseline;
  // Unresolved, no deployment's changes are the record's.
  out["drift"] = chosen.resolved() ? changes_since(h.drift, q) : nlohmann::json::array();
  std::vector<std::string> warnings;
  const std::string runtime_change = runtime_since(h, rec, f, warnings);
  out["warnings"] = warnings;
  judge(out, {rec, f, same_cell, fraction, unknown_reason, runtime_change}, out["drift"]);
  return out;
}

nlohmann::json method_json(const AssessOptions& o, const std::string& deployment_rule) {
  return {
      {"deployment", deployment_rule},
      {"ratio",
       fmt::format("target / record: the cells' mix slowdowns over each run's baseline cell, from the "
                   "newest parity run of the deployment at or before the target date that timed both "
                   "cells, combined with up to {} earlier runs of the same deployment and observed runtime",
                   o.nights - 1)},
      {"nights", parity::kNightsMethod},
      {"compute_fraction",
       fmt::format("corrected = duration x (1 - f + f x ratio), f the share of the task time that is "
                   "sandbox compute: the record's compute_fraction, else its named mix's (the scenario's "
                   "mixes), else {} (default{})",
                   o.compute_fraction,
                   o.compute_fraction == 1.0 ? ": the whole task time treated as sandbox compute, the "
                                               "largest correction"
                                             : "")},
      {"verdict",
       std::string(parity::kVerdictSides) +
           "; for a record: comparable = parity of the effective ratio, adjust = wholly outside (use "
           "the corrected duration), stale when the record's own cell changed since it was recorded, "
           "unstable when the runs' A/A noise exceeds the tolerance, unknown without a parity run of "
           "the deployment"},
      {"drift",
       "change points of the cells' mix series (history drift, E-divisive means) that start "
       "after recorded_at"}};
}

// The deployment records naming none are judged against (--deployment, else the history's
// only one, else none), every deployment the history holds, and the runs left out for the
// default. A record's own deployment column overrides it for that record.
nlohmann::json deployment_json(const std::set<std::string>& held, const HistoryView& h,
                               const AssessOptions& o) {
  const Chosen d = choose_deployment(BaselineRecord{}, held, o);
  nlohmann::json left_out = nlohmann::json::array();
  for (const auto& r : h.runs)
    if (r.provenance.key() != d.name)
      left_out.push_back({{"run", r.run_id}, {"deployment", r.provenance.key()}});
  const std::string rule =
      d.resolved()
          ? fmt::format(
                "records naming no deployment are judged against {} ({}); a record's deployment "
                "column names its own",
                d.name, d.from)
          : "records naming no deployment are unknown: " + (held.size() > 1 ? several(held) : d.reason);
  nlohmann::json out = {{"name", d.name.empty() ? nlohmann::json() : nlohmann::json(d.name)},
                        {"chosen", d.resolved() ? nlohmann::json(d.from) : nlohmann::json()},
                        {"deployments", held},
                        {"rule", rule},
                        {"other_deployments_allowed", o.other_deployments},
                        {"runs_of_other_deployments", left_out},
                        {"warning", nullptr}};
  if (d.name.ends_with(std::string("/") + kUnknownDeployment))
    out["warning"] =
        "runs recorded before parity runs carried their deployment: they are compared only with each other, "
        "by backend, and never with a named deployment";
  return out;
}

}  // namespace

nlohmann::json assess(const BaselineFile& file, const HistoryView& history, const Target& target,
                      const Mixes& mixes, const AssessOptions& options) {
  AssessOptions o = options;
  o.nights = std::max(1, o.nights);
  const std::set<std::string> held = deployments_of(history, mixes.scenario);
  const nlohmann::json deployment = deployment_json(held, history, o);
  nlohmann::json records = nlohmann::json::array();
  std::map<std::string, int> counts = {{kComparable, 0}, {kAdjust, 0},  {kInconclusive, 0},
                                       {kStale, 0},      {kUnknown, 0}, {kUnstable, 0}};
  for (const auto& rec : file.records) {
    records.push_back(assess_record(rec, history, target, mixes, o, choose_deployment(rec, held, o)));
    ++counts[records.back()["verdict"].get<std::string>()];
  }
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : history.runs) runs.push_back(r.run_id);
  // The intervals' confidence: the runs' when they all agree, else null (each record's
  // source says its own); reports print this, never a fixed number.
  std::set<double> confidences;
  for (const auto& r : records)
    if (r["source"].is_object()) confidences.insert(r["source"]["confidence"].get<double>());
  const nlohmann::json confidence =
      confidences.size() == 1 ? nlohmann::json(*confidences.begin()) : nlohmann::json();
  nlohmann::json summary = {{"records", file.records.size()}};
  for (const auto& [k, v] : counts) summary[k] = v;
  return {{"schema", kSchema},
          {"input", {{"file", file.path}, {"format", file.format}, {"columns", file.columns}}},
          {"target",
           {{"cell", target.cell()},
            {"runtime", target.runtime},
            {"node_class", target.node_class},
            {"at", target.at_utc}}},
          {"scenario", mixes.scenario},
          {"deployment", deployment},
          {"nights", o.nights},
          {"confidence", confidence},
          {"compute_fraction_default", o.compute_fraction},
          {"compute_fraction_mixes", mixes.compute_fractions},
          {"parity_runs", runs},
          {"method", method_json(o, deployment["rule"].get<std::string>())},
          {"records", records},
          {"summary", summary}};
}

}  // namespace isoharness::baselines
