// verify: compares what a sandbox showed (isoprobe's posture document) with what the plan
// promised (the item's `expect` block), control by control, runtime-aware.
//
// The principle is the reference's: judge whether the host was reached, not whether a
// dangerous-looking interface is visible. The plan states every rule (which states of an
// interface each kernel may show); verify observes. An interface gVisor emulates (a
// writable sysrq-trigger, a user namespace that can be created, Seccomp: 0) reads
// "emulated" only when the sandbox is *observed* to run under gVisor (several signals);
// the same observation under the host kernel reads "created"/"writable"/"off", which no
// plan accepts. Whether the kernel is the one the plan asked
// for is its own check, so a sandbox started under runc behind the plan's back fails
// there and gets no emulation excuses anywhere else.
#pragma once

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/common/expected.h"
#include "harness/common/verdict.h"
#include "harness/deploy/backend.h"
#include "harness/policy/plan.h"
#include "harness/verify/runtime_escapes.h"

namespace isoharness::verify {

// Facts about the machine the sandboxes run on, for "was the host reached" evidence.
struct HostFacts {
  std::string boot_id;
  std::string kernel_release;
  std::string hostname;
  std::string pid1;  // comm of the host's PID 1
  int process_count = 0;
  std::vector<std::string> interfaces;  // of the host's root network namespace
};

// Reads HostFacts from this machine's /proc and /sys (the I/O seam; tests build HostFacts
// by hand).
HostFacts read_host_facts();

struct CheckResult {
  std::string control;  // stable name, e.g. "capabilities", "egress:metadata"
  CheckStatus status = CheckStatus::na;
  std::string expected;  // human-readable
  std::string observed;  // human-readable
  std::string reason;    // why this status (names the control on failure)
  std::string evidence;  // raw text from the probe, bounded
  // Who judged it (typed; never parsed from the words above): a failing check names the
  // judges whose evidence failed it, a passing one those that agreed.
  std::vector<Judge> judges;
  // A posture check judged on the sandbox's word alone: the profile says `node_view: none`.
  bool self_reported = false;
  // A check that passes only because the deployment profile accepts what failed it
  // (accepted_risks, accepted_runtime_escapes) or a risk the tool names (runsc's age): the
  // summary counts these as known risks; its reason says which.
  bool known_risk = false;
};

struct VerifyInput {
  const nlohmann::json& expect;   // plan item's expect block (docs/CONTRACTS.md §2)
  const nlohmann::json& posture;  // isoprobe posture document (§3)
  const HostFacts& host;
  const std::vector<deploy::EgressTarget>& targets;  // what the probe was asked to reach
  policy::Level level = policy::Level::standard;
  // What the backend's outside witness saw while the probe ran (deploy::Backend::witness);
  // null when the backend has none: egress checks are then `unwitnessed`, unless
  // witness_waived (the deployment profile says `witness: none`), when they rest on the
  // sandbox's own report (egress_verdict.h).
  const deploy::WitnessView* witness = nullptr;
  bool witness_waived = false;
  // What the node saw of the sandbox (deploy::Backend::node_view, or `check --node-view`);
  // null when there is none: posture checks are then `unwitnessed`, unless
  // node_view_waived (the profile says `node_view: none`), when they rest on the sandbox's
  // own report and are marked self-reported (node_verdict.cc).
  const deploy::NodeView* node_view = nullptr;
  bool node_view_waived = false;
};

// Every check, in a stable order. Never throws on malformed posture: a missing or
// malformed observation makes the checks that need it fail with that reason. A posture
// document with schema problems (below) adds a failing "posture_schema" check and turns
// every check that would pass into a failure: nothing in a forged document passes.
std::vector<CheckResult> verify_sandbox(const VerifyInput& input);

// Parses isoprobe's output as a posture document: JSON, an object, nested at most
// kMaxPostureDepth deep (a deeper document would make every later writer of the result
// recurse that deep). The error says which. Never throws.
inline constexpr int kMaxPostureDepth = 32;
Expected<nlohmann::json> parse_posture(std::string_view text);

// What makes a posture document something isoprobe cannot have written (posture_schema.cc):
// off-schema keys, names, statuses or types, duplicate observations, oversized evidence,
// self-contradicting values. Empty when the document is sound. Never throws.
std::vector<std::string> posture_schema_problems(const nlohmann::json& posture);

nlohmann::json to_json(const CheckResult& check);

// Whether the node's view judges the posture check `control` (the node verdict rule's
// table, node_verdict.cc): selftest holds each posture weakening's judge to it.
bool node_judged(const std::string& control);

// runtime_version (runtime_version_check.cc): the sandbox's runtime stack against the
// escape tables of its components (runtime_escapes.h): the CRI runtime (containerd, on a
// deployment) for every item; the OCI runtime of its runtime class (runc or crun for the
// node's default, runsc for gVisor); the NVIDIA Container Toolkit for items with a GPU
// service only. Each version comes from the facts: locally the runtime's own --version as
// the backend ran it; on a deployment the profile's node_image; else that component is n/a,
// saying what is not observable. A version that is given but cannot be read, or a table that
// cannot be read, fails. A gVisor item shows runsc's release date and age, a known risk past
// runsc_max_age_days; a table reviewed more than 180 days before `now` is named.
//
// accepted: escapes the deployment profile declares it runs open to ({component, CVE} ->
// its reason, `accepted_runtime_escapes:`). An open escape listed there does not fail the
// check; the check's reason names it and the reason, so every report shows it.
using AcceptedEscapes = std::map<std::pair<std::string, std::string>, std::string>;

struct RuntimeVersionInput {
  const deploy::SandboxFacts& facts;
  const AcceptedEscapes& accepted;
  bool gpu = false;  // the plan's item has a GPU service (policy::PlanItem::gpu)
  // The OCI runtime of the item's runtime class ("runc", "crun", "runsc"; a class named
  // gvisor counts as runsc); "": the facts' runtime, else the node's default.
  std::string oci_runtime;
  std::chrono::system_clock::time_point now = std::chrono::system_clock::now();  // the run's time
  int runsc_max_age_days = 365;
  const EscapeTables* tables = nullptr;  // null: the shipped (or ISOHARNESS_RUNTIME_ESCAPES) folder
};
CheckResult check_runtime_version(const RuntimeVersionInput& in);
CheckResult check_runtime_version(const deploy::SandboxFacts& facts, const AcceptedEscapes& accepted = {});

// The checks the deployment profile accepts by name (`accepted_risks:`, check -> reason). A
// failed check listed there passes as a known risk: its reason reads "known risk: accepted
// by the deployment profile (<reason>): <why it failed>", so every report and the summary
// line show it. A check that passed, or could not be judged, is left as it is.
using AcceptedRisks = std::map<std::string, std::string>;
void accept_risks(std::vector<CheckResult>& checks, const AcceptedRisks& accepted);
// Whether a check passed only as a known risk (accepted_risks, accepted_runtime_escapes).
inline constexpr std::string_view kKnownRiskPrefix = "known risk: ";
bool passed_as_known_risk(const nlohmann::json& check);

// The reason a check gets when it would pass but rests on a posture document the control
// `because` found untrustworthy (posture_schema here, agent_upload in the runner).
std::string untrusted_reason(const std::string& control, const std::string& because);

// Whether the plan opens this way out: the one decision egress:<name> is judged against
// (policy::egress_permitted_on, by the target's role, name, address, transport and port).
// The runner asks it too, to give the targets the plan closes a short deadline.
bool egress_target_allowed(const nlohmann::json& expect, const deploy::EgressTarget& target);

// The keys of the plan's expect block the checks read, each once. A check whose key is
// missing from the plan fails, naming it; the plan writes exactly these keys.
std::vector<std::string> expect_keys_read();

}  // namespace isoharness::verify
