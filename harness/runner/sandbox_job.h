// One job of the run: for each attempt, a fresh sandbox is deployed, reached through the
// jumphost, probed, verified and destroyed; its record goes to the journal at once.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/deploy/backend.h"
#include "harness/runner/fanout.h"
#include "harness/runner/journal.h"
#include "harness/runner/matrix.h"
#include "harness/runner/run_support.h"
#include "harness/transport/transport.h"
#include "harness/verify/verify.h"

namespace isoharness::runner {

// Everything the jobs of one run share. The jump connection is opened on first use and
// reopened when it dies; it is thread-safe itself.
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
  std::atomic<bool> infrastructure_failed{false};
  std::atomic<int> sequence{0};

  std::mutex jump_mutex;
  std::unique_ptr<transport::JumpConnection> jump;
  std::vector<transport::AcceptedKey> accepted_keys;

  // Progress line callback: (record) after each sandbox.
  std::function<void(const nlohmann::json&)> on_sandbox;
};

// The backend request for one attempt of a job (tamper hook applied).
deploy::SandboxRequest make_request(const Job& job, int attempt, const std::string& name, JobContext& ctx);

// Runs every attempt of the job. Never throws: failures become records with "error".
void run_job(const Job& job, JobContext& ctx);

}  // namespace isoharness::runner
