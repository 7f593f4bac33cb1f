// read_history(): the parity runs and the drift of the mix series, up to the target date,
// read through harness/history's public functions only.
#include <algorithm>

#include "harness/baselines/baselines.h"
#include "harness/history/drift.h"
#include "harness/history/history.h"

namespace isoharness::baselines {

HistoryView read_history(const history::Database& db, const std::string& at_utc) {
  HistoryView view;
  std::map<std::string, std::vector<std::string>> notes;
  for (const auto& a : db.annotations()) notes[a.run_id].push_back(a.text);
  auto rows = db.runs(1000000);
  std::reverse(rows.begin(), rows.end());  // oldest first
  std::vector<history::RunInfo> infos;
  for (const auto& r : rows) {
    if (r.started > at_utc) continue;
    if (r.kind != "parity") {
      infos.push_back({r.id, r.started, r.context, notes[r.id], history::context_deployment(r.context)});
      continue;
    }
    const auto result = db.result(r.id);
    infos.push_back({r.id, r.started, r.context, notes[r.id], history::run_deployment(result)});
    for (auto& p : parity_runs_of(result, r.id, r.started)) view.runs.push_back(std::move(p));
  }
  std::vector<history::SeriesPoint> points;
  for (auto& p : db.points())
    if (p.started <= at_utc && p.workload == history::kMixWorkload) points.push_back(std::move(p));
  history::DriftOptions options;
  options.gate.clear();
  view.drift = history::analyse_drift(points, infos, options);
  return view;
}

}  // namespace isoharness::baselines
