// Internal to verify: safe accessors over the (untrusted) posture document and the
// check families. The posture comes from inside a possibly hostile sandbox: every access
// tolerates a missing key or a wrong type.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/verify/verify.h"

namespace isoharness::verify::detail {

// Every observation name the posture schema knows (posture_schema.cc), sorted.
std::vector<std::string> posture_observation_names();

// The observation named `name` when it is present with status "ok", else nullptr.
const nlohmann::json* observation(const nlohmann::json& posture, const std::string& name);
// Status text of an observation ("ok", "error", "skipped", or "missing").
std::string observation_status(const nlohmann::json& posture, const std::string& name);
std::string observation_evidence(const nlohmann::json& posture, const std::string& name);

std::optional<bool> get_bool(const nlohmann::json* obj, const char* key);
std::optional<long long> get_int(const nlohmann::json* obj, const char* key);
std::optional<std::string> get_string(const nlohmann::json* obj, const char* key);
std::vector<std::string> get_strings(const nlohmann::json* obj, const char* key);

std::string bounded(std::string text, std::size_t max = 2048);

// A check whose observation is missing or failed: it fails, naming why.
CheckResult missing(const std::string& control, const nlohmann::json& posture, const std::string& obs,
                    const std::string& expected);

CheckResult make(const std::string& control, bool pass, std::string expected, std::string observed,
                 std::string reason, std::string evidence = "");
CheckResult not_applicable(const std::string& control, std::string reason, std::string observed = "");

// The plan's promise under `key` (the item's expect block), or nullptr when the plan says
// nothing there. A check whose key is missing fails through `unplanned`: a control the
// plan gives no rule for is not a pass.
const nlohmann::json* planned(const VerifyInput& in, const char* key);
CheckResult unplanned(const std::string& control, const char* key);

// An interface judged by its observed state against the states the plan accepts under
// `control` (policy/expectations.cc states which, per kernel). `state` is nullopt when the
// observation is missing; "emulated" is an open interface seen under an observed gVisor.
struct InterfaceState {
  std::string control;
  std::string observation;  // isoprobe observation name
  std::optional<std::string> state;
  std::string observed_text;  // for people
};
void judge_interface(const VerifyInput& in, const InterfaceState& seen, std::vector<CheckResult>& out);

// Whether the sandbox is observed to be gVisor (the probe's own multi-signal verdict).
bool observed_gvisor(const nlohmann::json& posture);

// Capability bit numbers by name (CAP_SYS_ADMIN → 21); -1 when unknown.
int capability_bit(const std::string& name);
std::string capability_names(unsigned long long mask);

void check_kernel(const VerifyInput& in, std::vector<CheckResult>& out);
void check_privileges(const VerifyInput& in, std::vector<CheckResult>& out);
void check_filesystem(const VerifyInput& in, std::vector<CheckResult>& out);
void check_emulated_interfaces(const VerifyInput& in, std::vector<CheckResult>& out);
void check_host_reached(const VerifyInput& in, std::vector<CheckResult>& out);
void check_egress(const VerifyInput& in, std::vector<CheckResult>& out);
// raw_sockets: raw and packet sockets against CAP_NET_RAW in the plan (raw_socket_checks.cc).
void check_raw_sockets(const VerifyInput& in, std::vector<CheckResult>& out);
void check_escape_classes(const VerifyInput& in, std::vector<CheckResult>& out);

// The node verdict rule (node_verdict.cc, docs/CONTRACTS.md §4.8): every posture check
// that passed on the sandbox's word passes only when the node's view agrees too; a
// disagreement fails it naming both sides, a missing view makes it `unwitnessed`, and a
// profile with `node_view: none` marks it self-reported.
void apply_node_rule(const VerifyInput& in, std::vector<CheckResult>& out);
// Whether the node's view judges `control` at all (the rule's table).
bool node_judges(const std::string& control);

// " (escape class: dangerous capabilities; what it opens)" for the capabilities the
// published escapes use, else "".
std::string capability_escape_class(const std::string& name);

// One egress target judged by the one rule (egress_verdict.h) on what the arrival witness
// and the drop point recorded (witness_checks.cc), with the sandbox's own report beside it.
CheckResult judge_egress_target(const VerifyInput& in, const deploy::EgressTarget& target, bool allowed,
                                const std::string& why, const std::string& sandbox_result,
                                const std::string& sandbox_evidence);
// Whether the arrival witness recorded the target's traffic from this sandbox.
bool arrival_seen(const VerifyInput& in, const deploy::EgressTarget& target);

}  // namespace isoharness::verify::detail
