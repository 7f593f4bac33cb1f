// The catalogue of `isoharness selftest`: named weakenings of one sandbox, each applied
// after planning while the plan (and so every expected verdict) stays that of the
// unweakened item, and each naming the verify controls that must catch it.
//
// A weakening acts at one of two layers:
//   - the rendered values (edit_values: a kept capability, a dropped runtime class), as a
//     misconfigured renderer or admission hook would;
//   - the OCI spec or the node's egress policy (backend: names the backend applies, see
//     harness/deploy/local/weakenings.h), as a misconfigured runtime or CNI would.
// Adding one is one entry in catalogue.cc.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace isoharness::selftest {

struct Weakening {
  std::string name;                    // stable, [a-z0-9_]
  std::string what;                    // one line for the reports
  std::vector<std::string> caught_by;  // verify controls; the weakening is caught when one of them fails
  // Why it cannot be applied or observed under a runtime ("runc", "gvisor") on this
  // machine; "" = applicable. Read once per selftest.
  std::function<std::string(const std::string& runtime)> not_applicable;
  // Edits the agent's service (values.services.default) of the item; null = none.
  std::function<void(nlohmann::json& service)> edit_values;
  std::vector<std::string> backend;  // deploy::SandboxRequest::test_weakenings
  int attempts = 1;                  // 2 when the weakening is about what attempts share
  bool needs_peer = false;           // probes a second, live sandbox (egress:peer-sandbox)
  bool quick = false;                // in `selftest --quick`
  // Edits the item's values as a whole (an item-wide key such as
  // automountServiceAccountToken); null = none.
  std::function<void(nlohmann::json& values)> edit_item_values;
  // The judge that must catch it (detection.h, judges_of): kJudgeWitness (the outside
  // witness's record of what arrived), kJudgeSandbox (the sandbox's own report) or
  // kJudgePosture (a posture check). A caught_by control that failed by another judge only
  // does not count.
  std::string judge = "posture";
  // Takes away evidence the whole run shares (the world's witness): its sandbox runs by
  // itself, after every other job, so no other sandbox's evidence goes with it.
  bool alone = false;
};

inline constexpr const char* kJudgeWitness = "witness";
inline constexpr const char* kJudgeSandbox = "sandbox report";
inline constexpr const char* kJudgePosture = "posture";
// The node's view of the sandbox (deploy/node_view.h): what the machine it runs on sees of
// its confinement, whatever the sandbox reports.
inline constexpr const char* kJudgeNode = "node";
// A weakening of the verifier's own evidence (a dead or truncated witness, a flooded one, an
// agent whose packets never leave): caught when none of its caught_by controls passed and at
// least one ended unwitnessed or failed. No judge can see such a weakening; what selftest
// proves is that the harness does not pass what it could not see.
inline constexpr const char* kJudgeEvidence = "evidence";

// Every weakening, in report order. Names are unique.
const std::vector<Weakening>& catalogue();

// The entries called `names` (all when empty; the quick subset when quick). Throws
// UserError naming every unknown name, with the known ones.
std::vector<const Weakening*> select(const std::vector<std::string>& names, bool quick);

// The egress target selftest adds for needs_peer entries: another sandbox's sshd.
inline constexpr const char* kPeerTarget = "peer-sandbox";
// The same sshd at the peer's IPv6 address (the local world's sandboxes are dual-stack).
inline constexpr const char* kPeerTarget6 = "peer-sandbox6";

}  // namespace isoharness::selftest
