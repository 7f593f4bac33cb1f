// "Fail loudly", checked where it matters: scenarios that say `expect: refused` hold a
// config the platform must refuse (an item below the eval set's level, allow-all egress
// under strict, unknown isolation keys or levels, non_root on a root image). Each is
// submitted like any item; it passes only if the submission is refused with an `Error:`
// message (naming `reason:` when given) and no sandbox of it ever runs. A platform that
// accepts one has quietly given a weaker sandbox: the check `fail_loudly` fails, the eval
// is deleted at once. On the local backend the policy planner is the platform.
//
// On a deployment that configures no hardened runtime class, strict is refused at
// submission (the reference's "Your deployment has to offer a hardened runtime"). There a
// scenario that would plan if the deployment had a hardened class, and does not plan
// without one, is run as an expected refusal too: its first item that needs the class is
// submitted, and the refusal must name the hardened runtime class.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/runner/sandbox_job.h"
#include "harness/scenario/scenario.h"

namespace isoharness::runner {

// The substring a refusal of strict on a deployment without a hardened class must contain.
inline constexpr const char* kNoHardenedClassReason = "hardened runtime class";

struct RefusalJob {
  scenario::Scenario scenario;  // expect_refused set; refusal_reason is what the refusal must name
  std::vector<std::string> planner_errors;  // what isoharness's own planner says (empty: it accepts)
  std::string rule;                         // the rule the config breaks, for people and reports
  std::string item_id;                      // what the record is filed under
  std::size_t task_index = 0;               // the item submitted (a one-item eval set)
  std::size_t item_index = 0;
};

// Splits scenario files into refusal jobs (returned) and the others (left in paths): every
// `expect: refused` scenario, and on a deployment without a hardened runtime class every
// scenario refused only for want of one.
std::vector<RefusalJob> take_refusals(std::vector<std::string>& paths,
                                      const scenario::DeploymentProfile& profile);

// Submits the refusal job's item through the backend (or asks the planner, for backends
// that plan locally) and journals one record whose only check is `fail_loudly`.
void run_refusal(const RefusalJob& job, JobContext& ctx);

}  // namespace isoharness::runner
