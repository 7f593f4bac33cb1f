#include "harness/selftest/selftest_jobs.h"

#include <algorithm>

#include "harness/common/error.h"

namespace isoharness::selftest {

SelftestJobs make_jobs(const std::vector<runner::Job>& base_jobs, const std::vector<runner::Skipped>& skipped,
                       const std::vector<std::string>& runtimes,
                       const std::vector<const Weakening*>& weakenings) {
  SelftestJobs out;
  for (const auto& j : base_jobs)
    if (!out.base.count(j.runtime)) out.base.emplace(j.runtime, j);
  for (const auto& r : runtimes) {
    if (out.base.count(r)) continue;
    std::string why;
    for (const auto& s : skipped)
      if (s.runtime == r) why += (why.empty() ? "" : "; ") + s.item_id + ": " + s.reason;
    out.not_applicable[{"", r}] =
        "no item of the selftest scenario runs under " + r + (why.empty() ? "" : ": " + why);
  }

  std::map<std::string, int> clean_attempts;
  std::vector<runner::Job> weakened;
  std::vector<runner::Job> alone;
  for (const Weakening* w : weakenings) {
    for (const auto& r : runtimes) {
      std::string why = w->not_applicable ? w->not_applicable(r) : "";
      auto base = out.base.find(r);
      if (why.empty() && base == out.base.end()) why = out.not_applicable[{"", r}];
      if (!why.empty()) {
        out.not_applicable[{w->name, r}] = why;
        continue;
      }
      runner::Job job = base->second;
      job.attempts = w->attempts;
      job.weakenings = {w->name};
      (w->alone ? alone : weakened).push_back(job);
      clean_attempts[r] = std::max(clean_attempts[r], w->attempts);
      out.needs_peer = out.needs_peer || w->needs_peer;
    }
  }
  // A clean control per runtime, with as many attempts as any weakening of that runtime,
  // so a later attempt's freshness is checked clean too.
  for (const auto& [runtime, job] : out.base) {
    runner::Job clean = job;
    clean.attempts = std::max(1, clean_attempts[runtime]);
    out.jobs.push_back(clean);
  }
  // Longest first: several attempts, then gVisor (slower to start and to probe).
  std::stable_sort(weakened.begin(), weakened.end(), [](const runner::Job& a, const runner::Job& b) {
    if (a.attempts != b.attempts) return a.attempts > b.attempts;
    return (a.runtime == "gvisor") > (b.runtime == "gvisor");
  });
  out.jobs.insert(out.jobs.end(), weakened.begin(), weakened.end());
  out.alone = std::move(alone);
  return out;
}

void apply_weakenings(const std::vector<std::string>& names, nlohmann::json& values,
                      std::vector<std::string>& backend_weakenings) {
  for (const auto& name : names) {
    const auto& all = catalogue();
    auto it = std::find_if(all.begin(), all.end(), [&](const Weakening& w) { return w.name == name; });
    if (it == all.end()) throw InfraError("selftest: no weakening named " + name);
    if (it->edit_values) {
      if (!values.contains("services") || !values["services"].contains("default"))
        throw InfraError("selftest: weakening " + name + ": the item's values have no default service");
      it->edit_values(values["services"]["default"]);
    }
    if (it->edit_item_values) it->edit_item_values(values);
    backend_weakenings.insert(backend_weakenings.end(), it->backend.begin(), it->backend.end());
  }
}

}  // namespace isoharness::selftest
