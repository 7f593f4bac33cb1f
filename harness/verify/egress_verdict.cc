#include "harness/verify/egress_verdict.h"

namespace isoharness::verify {
namespace {

EgressJudgement row(CheckStatus status, const char* name, std::string why) {
  return EgressJudgement{status, name, std::move(why)};
}

// A way out the plan closes.
EgressJudgement judge_blocked(const EgressEvidence& e) {
  if (e.sandbox_result == "connected")
    return row(CheckStatus::fail, "B1", "the sandbox reports it connected to a way out the plan closes");
  if (e.arrival == Witnessed::seen)
    return row(CheckStatus::fail, "B2", "the arrival witness recorded the sandbox's traffic arriving");
  if (e.arrival == Witnessed::unusable)
    return row(CheckStatus::unwitnessed, "B3", "the arrival witness's record cannot be judged on");
  if (e.drop == Witnessed::unusable || e.drop == Witnessed::not_covering)
    return row(CheckStatus::unwitnessed, "B4", "no drop point watched this way out");
  if (e.drop == Witnessed::not_seen)
    return row(CheckStatus::unwitnessed, "B5",
               "the drop point has no record that the attempt left the sandbox: nothing shows it was sent");
  return row(CheckStatus::pass, "B6", "the drop point stopped the attempt and nothing arrived");
}

// A way out the plan opens.
EgressJudgement judge_allowed(const EgressEvidence& e) {
  if (e.arrival == Witnessed::seen)
    return row(CheckStatus::pass, "A1", "the arrival witness recorded it arriving");
  if (e.arrival == Witnessed::not_seen)
    return row(CheckStatus::fail, "A3", "the arrival witness watched the whole window and nothing arrived");
  return row(CheckStatus::unwitnessed, "A2", "no arrival witness could judge this way out");
}

}  // namespace

EgressJudgement judge_egress(const EgressEvidence& e) {
  if (!e.allowed && e.sandbox_result == "connected") return judge_blocked(e);  // B1, whatever the witnesses
  if (e.arrival == Witnessed::waived || e.drop == Witnessed::waived) {
    const bool connected = e.sandbox_result == "connected";
    return row(pass_or_fail(connected == e.allowed), "W",
               "the deployment declares no witness (witness: none): judged on the sandbox's own report");
  }
  return e.allowed ? judge_allowed(e) : judge_blocked(e);
}

}  // namespace isoharness::verify
