// Counting the checks of sandbox records (the result's `sandboxes[]`), the one place the
// run's summary, its progress lines and selftest's sandbox summary count them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "harness/common/verdict.h"

namespace isoharness::runner {

struct CheckTally {
  int checks = 0, pass = 0, fail = 0, na = 0;
  int unwitnessed = 0;        // checks whose witness evidence was missing: an infrastructure error
  int errors = 0;             // records with an "error" (a sandbox that could not be judged)
  std::string first_failure;  // the reason of the first failing check
  // "<sandbox id> <control>: <reason>" of the first kMaxUnwitnessedShown unwitnessed checks.
  std::vector<std::string> unwitnessed_checks;
  // Egress checks judged on the sandbox's own report (only where the profile says `witness: none`).
  int sandbox_reported = 0;
  // Posture checks judged on the sandbox's own report (only where the profile says
  // `node_view: none`).
  int posture_self_reported = 0;
};

inline constexpr std::size_t kMaxUnwitnessedShown = 20;

// Adds one record's checks (a status this build does not know counts as n/a).
void add_record(CheckTally& tally, const nlohmann::json& record);

// Every record's checks.
CheckTally tally_records(const nlohmann::json& records);

// The verdict of records that all ran: an error (a sandbox that could not be judged, or a
// check whose witness evidence was missing) outweighs a failure.
inline Verdict verdict_of(const CheckTally& t) {
  return verdict_from(t.errors > 0 || t.unwitnessed > 0, t.fail > 0);
}

}  // namespace isoharness::runner
