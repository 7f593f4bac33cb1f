// What the jobs of one run share, in three parts with one owner each:
//   RunSettings  how the run reaches and judges its sandboxes; built by the command (run,
//                check, parity, selftest) and its RunSession before any job starts, then
//                handed to the jobs as const.
//   RunState     what jobs write while they run: the sandbox sequence and whether (and why)
//                the run has stopped.
//   JumpPool     the jump connections (jump_pool.h).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "harness/deploy/backend.h"
#include "harness/policy/plan.h"
#include "harness/transport/transport.h"
#include "harness/verify/verify.h"

namespace isoharness::runner {

struct Job;

struct RunSettings {
  std::string run_id;
  transport::Credentials credentials;
  std::string public_key_line;  // handed to every sandbox the backend deploys
  transport::HostKeyPolicy host_key_policy;
  // Sandbox keys are accepted on first use only through a jumphost whose key is pinned
  // (hawk's `first-use`); --accept-new-host-keys lifts this.
  bool jump_key_must_be_pinned = false;
  std::string isoprobe_bundle;
  std::vector<deploy::EgressTarget> targets;  // the backend's world
  verify::HostFacts host;
  std::chrono::milliseconds posture_deadline{std::chrono::seconds(90)};
  std::chrono::milliseconds egress_deadline{3000};  // the deployment profile's egress_deadline_ms
  // The wait on each target the plan closes (the profile's egress_blocked_deadline_ms), when
  // the witnesses judge egress; 0: every target gets egress_deadline (posture_argv).
  std::chrono::milliseconds blocked_deadline{0};
  // The deployment profile says `witness: none`: egress checks rest on the sandbox's report.
  bool witness_waived = false;
  // The deployment profile says `node_view: none`: posture checks rest on the sandbox's report.
  bool node_view_waived = false;
  // `isoharness check --node-view`: the node's view of the existing sandbox, read once
  // before probing (a file, or a command's output); nullopt: the backend's own, if any.
  std::optional<deploy::NodeView> given_node_view;
  // `isoharness check`: the sandbox was there before and stays; freshness is not judged and
  // no marker is left in it.
  bool existing_sandbox = false;
  // Extra egress targets per item (allowed domains on the deployment's port).
  std::function<std::vector<deploy::EgressTarget>(const policy::PlanItem& item)> item_targets;
  // The one test seam that weakens a sandbox behind the plan's back: it edits each job's
  // backend request (its values, deploy::SandboxRequest::test_weakenings). `run`'s system
  // tests set it through RunConfig::tamper / test_weakenings, and then every record is
  // marked "tampered"; `selftest` sets it to apply each job's named weakenings (Job::weakenings,
  // recorded as "weakenings"). Unset in every real run; a job that names weakenings with no
  // hook set is an error.
  std::function<void(const Job&, deploy::SandboxRequest&)> weaken;
  bool mark_tampered = false;  // every record says "tampered": true (run's seam)
  // Selftest's lying agent only (`selftest --agent lying`, harness/selftest/lying_agent.h):
  // rewrites the posture document the sandbox answered before it is judged, as an agent
  // that controls its isoprobe would. Unset in every real run.
  std::function<void(const Job&, nlohmann::json& posture)> forge_posture;
  // How many other live sandboxes each sandbox tries as peers (the profile's
  // peers_per_sandbox; harness/verify/peer_checks.h).
  int peers_per_sandbox = 2;
  // The deployment profile's accepted_runtime_escapes ({component, CVE} -> reason), for
  // runtime_version.
  verify::AcceptedEscapes accepted_escapes;
  // The profile's runtime classes -> the handler each must run (DeploymentProfile::handler_of:
  // its runtime_handlers entry, else the class's own name), every class of runtime_classes
  // and of runtime_handlers: which OCI runtime's escapes apply to an item, and what the
  // Kubernetes API's RuntimeClass objects are judged against (harness/verify/kubernetes_api.h);
  // and the profile's runsc_max_age_days.
  std::map<std::string, std::string> runtime_handlers;
  int runsc_max_age_days = 365;
  // The deployment profile's accepted_risks (check -> reason): those checks pass as known risks.
  verify::AcceptedRisks accepted_risks;
};

class RunState {
 public:
  // interrupted: the signal flag (g_interrupted), or none.
  explicit RunState(const std::atomic<bool>* interrupted = nullptr) : interrupted_(interrupted) {}
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;

  // Set by the first failure no later sandbox can escape (RunStoppingError, or a signal):
  // no job starts another sandbox once it is set. An error of one sandbox (a failed start,
  // one that never came up, a dead session) is that sandbox's record and sets nothing.
  void stop_run(const std::string& why);
  // Why no more sandboxes start ("" while they do).
  std::string stop_reason() const;
  bool stopped() const { return stop_flag_.load(); }
  bool interrupted() const { return interrupted_ && interrupted_->load(); }
  // The flag the worker pool watches (for_each_parallel).
  const std::atomic<bool>& stop_flag() const { return stop_flag_; }
  // selftest only: one cell's run-stopping error does not stop the others (its reason stays).
  void resume() { stop_flag_ = false; }
  // The next sandbox number of the run (1, 2, ...).
  int next_sequence() { return ++sequence_; }
  // Sandboxes the run holds (asked for, not yet destroyed): enter_held() when a deploy
  // starts, leave_held() when it fails or the sandbox's destroy has returned (a teardown in
  // the background still holds its eval). most_held() is the most it held at once, which
  // the result reports beside the harness's own peak memory.
  // With a limit (the platform's live evals per user, hawk.max_live_evals; 0: none),
  // enter_held() waits until a teardown makes room, so no start outruns a delete and meets
  // the platform's quota. Returns the seconds it waited; throws InfraError when the run
  // stops or is interrupted while it waits, or when no room came within max_wait (a run
  // that holds every slot for good, e.g. selftest's peer under a limit of 1).
  void set_held_limit(int limit, std::chrono::seconds max_wait) {
    held_limit_ = limit;
    held_max_wait_ = max_wait;
  }
  double enter_held();
  void leave_held();
  int most_held() const { return most_held_.load(); }
  int holding() const { return held_.load(); }

 private:
  const std::atomic<bool>* interrupted_;
  std::atomic<bool> stop_flag_{false};
  std::atomic<int> sequence_{0};
  std::atomic<int> held_{0};
  std::atomic<int> most_held_{0};
  std::atomic<int> held_limit_{0};
  std::chrono::seconds held_max_wait_{0};  // set before any job starts
  std::mutex held_mutex_;
  std::condition_variable room_;  // a sandbox was let go (under held_mutex_)
  mutable std::mutex mutex_;
  std::string stop_reason_;  // under mutex_
};

}  // namespace isoharness::runner
