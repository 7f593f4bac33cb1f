// "Fail loudly", checked where it matters: scenarios that say `expect: refused` hold a
// config the platform must refuse (an item below the eval set's level, allow-all egress
// under strict, unknown isolation keys or levels, non_root on a root image). Each is
// submitted like any item; it passes only if the submission is refused with an `Error:`
// message (naming `reason:` when given) and no sandbox of it ever runs. A platform that
// accepts one has quietly given a weaker sandbox: the check `fail_loudly` fails, the eval
// is deleted at once. On the local backend the policy planner is the platform.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/runner/sandbox_job.h"
#include "harness/scenario/scenario.h"

namespace isoharness::runner {

struct RefusalJob {
  scenario::Scenario scenario;
  std::vector<std::string> planner_errors;  // what isoharness's own planner says (empty: it accepts)
};

// Splits scenario files into refusal scenarios (returned) and the others (left in paths).
std::vector<RefusalJob> take_refusals(std::vector<std::string>& paths,
                                      const scenario::DeploymentProfile& profile);

// Submits the refusal scenario through the backend (or asks the planner, for backends
// that plan locally) and journals one record whose only check is `fail_loudly`.
void run_refusal(const RefusalJob& job, JobContext& ctx);

}  // namespace isoharness::runner
