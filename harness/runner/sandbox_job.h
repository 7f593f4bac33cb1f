// One job of the run: for each attempt, a fresh sandbox is deployed, reached through the
// jumphost, probed, verified and destroyed; its record goes to the journal at once.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/deploy/backend.h"
#include "harness/runner/fanout.h"
#include "harness/runner/journal.h"
#include "harness/runner/matrix.h"
#include "harness/runner/run_support.h"
#include "harness/transport/transport.h"
#include "harness/verify/verify.h"

namespace isoharness::runner {

// Everything the jobs of one run share. Jump connections (one per jumphost endpoint: under
// hawk each sandbox's ssh line names its own) are opened on first use and reopened when
// they die; each is thread-safe itself.
struct JobContext {
  // Sets the run id and logs in with the run's key (credentials and the public key line
  // handed to every sandbox).
  void use_key(const std::string& id, const RunKey& key) {
    run_id = id;
    credentials.private_key_path = key.private_path();
    credentials.public_key_path = key.public_path();
    public_key_line = key.public_line();
  }

  std::string run_id;
  deploy::Backend* backend = nullptr;
  Journal* journal = nullptr;
  transport::Credentials credentials;
  std::string public_key_line;
  transport::HostKeyPolicy host_key_policy;
  std::string isoprobe_bundle;
  std::vector<deploy::EgressTarget> targets;
  verify::HostFacts host;
  std::chrono::milliseconds posture_deadline{std::chrono::seconds(90)};
  std::chrono::milliseconds egress_deadline{3000};  // from the deployment profile (egress_deadline_ms)
  // Fan-out (fanout.h): how many deploy at once (none: no bound), and where finished
  // sandboxes are torn down (none: at once, by the job).
  DeployGate* deploy_gate = nullptr;
  Background* teardowns = nullptr;
  std::function<void(const std::string&, const std::string&, nlohmann::json&)> tamper;
  std::vector<std::string> test_weakenings;  // test seam: SandboxRequest::test_weakenings
  // Selftest seam (harness/selftest): applies a job's named weakenings to its request
  // (values edits, deploy::SandboxRequest::test_weakenings). Called only for jobs that name some.
  std::function<void(const Job&, deploy::SandboxRequest&)> weaken;
  std::atomic<bool>* interrupted = nullptr;
  // Set by the first failure no later sandbox can escape (RunStoppingError, or a signal):
  // no job starts another sandbox once it is set. An error of one sandbox (a failed start,
  // one that never came up, a dead session) is that sandbox's record and sets nothing.
  std::atomic<bool> infrastructure_failed{false};
  void stop_run(const std::string& why);
  // Why no more sandboxes start ("" while they do).
  std::string stop_reason();
  std::atomic<int> sequence{0};

  // Sandbox keys are accepted on first use only through a jumphost whose key is pinned
  // (hawk's `first-use`); --accept-new-host-keys lifts this.
  bool jump_key_must_be_pinned = false;
  // `isoharness check`: the sandbox was there before and stays; freshness is not judged and
  // no marker is left in it.
  bool existing_sandbox = false;
  // Extra egress targets per item (allowed domains on the deployment's port).
  std::function<std::vector<deploy::EgressTarget>(const policy::PlanItem& item)> item_targets;

  // The jump connection for this jumphost endpoint (opened or reopened as needed). Throws
  // InfraError when it cannot be reached or its key is not pinned where it must be.
  transport::JumpConnection& jump_for(const deploy::SshEndpoint& jump);
  // Closes every jump connection; every host key accepted on first use stays in accepted_keys.
  void close_jumps();

  std::mutex stop_mutex;
  std::string stop_reason_;  // under stop_mutex

  std::mutex jump_mutex;
  std::map<std::string, std::unique_ptr<transport::JumpConnection>> jumps;  // by user@host:port
  std::vector<transport::AcceptedKey> accepted_keys;

  // Progress line callback: (record) after each sandbox.
  std::function<void(const nlohmann::json&)> on_sandbox;
};

// The backend request for one attempt of a job (tamper hook applied).
deploy::SandboxRequest make_request(const Job& job, int attempt, const std::string& name, JobContext& ctx);

// Runs every attempt of the job. Never throws: failures become records with "error".
// Returns how many attempts it recorded (fewer than job.attempts once the run stopped).
int run_job(const Job& job, JobContext& ctx);

}  // namespace isoharness::runner
