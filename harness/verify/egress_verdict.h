// The one rule that turns what the witnesses saw of a way out into a check status
// (docs/CONTRACTS.md §4.4, "The egress verdict rule"). Two witnesses stand beside every
// way out: the arrival witness (where the packets would land) and the drop point (where the
// network policy stopped them). A blocked way out passes only on a drop point's record that
// the attempt left the sandbox and was stopped, with no record of arrival; a reachable one
// passes only on a record of arrival. A sandbox that reports reaching a blocked target fails
// whatever any witness says. Evidence that is missing makes the check `unwitnessed`, never
// a pass; only a deployment that declares it has no witness (`witness: none`) is judged on
// the sandbox's own report.
#pragma once

#include <string>

#include "harness/common/verdict.h"

namespace isoharness::verify {

// What one witness has to say about one way out.
enum class Witnessed {
  seen,          // it has a record: arrived (arrival witness) / stopped (drop point)
  not_seen,      // it watched the whole window and has no such record
  not_covering,  // the way out passes where this witness does not look
  unusable,      // there is no such witness, or its record cannot be judged on (dead, incomplete, ...)
  waived,        // the deployment declares it has none (`witness: none`)
};

struct EgressEvidence {
  bool allowed = false;        // what the plan says (policy::egress_permitted)
  std::string sandbox_result;  // isoprobe's word: "connected", "timeout", "refused", "dns_failed", ...
  Witnessed arrival = Witnessed::unusable;
  Witnessed drop = Witnessed::unusable;
};

// The row of the rule that decided (its name in the table), the status, and why in words.
struct EgressJudgement {
  CheckStatus status = CheckStatus::unwitnessed;
  const char* row = "";
  std::string why;
};

EgressJudgement judge_egress(const EgressEvidence& evidence);

}  // namespace isoharness::verify
