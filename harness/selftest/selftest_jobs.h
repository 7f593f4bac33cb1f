// Internal to selftest: from the planned selftest scenario and the chosen weakenings to
// the sandbox jobs (a clean control per runtime, one job per applicable weakening and
// runtime) and what was not applicable, with why. A weakening of evidence the run shares
// goes to `alone`: it runs by itself once every other job is done.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "harness/runner/matrix.h"
#include "harness/selftest/catalogue.h"

namespace isoharness::selftest {

struct SelftestJobs {
  std::map<std::string, runner::Job> base;  // runtime -> the unweakened item's job
  std::vector<runner::Job> jobs;            // clean controls first, then weakenings
  std::vector<runner::Job> alone;           // weakenings run one at a time after every job (Weakening::alone)
  // (weakening, runtime) -> why not applied; ("", runtime) -> why the runtime has no base item.
  std::map<std::pair<std::string, std::string>, std::string> not_applicable;
  bool needs_peer = false;
};

// base_jobs: runner::expand_jobs of the selftest scenario for `runtimes` (one item per
// runtime); skipped: its skipped list, which explains a runtime without an item.
SelftestJobs make_jobs(const std::vector<runner::Job>& base_jobs, const std::vector<runner::Skipped>& skipped,
                       const std::vector<std::string>& runtimes,
                       const std::vector<const Weakening*>& weakenings);

// Applies the job's weakenings to its request: edits the values, names the backend's.
// Throws InfraError for a name the catalogue does not hold.
void apply_weakenings(const std::vector<std::string>& names, nlohmann::json& values,
                      std::vector<std::string>& backend_weakenings);

}  // namespace isoharness::selftest
