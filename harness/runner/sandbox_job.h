// One job of the run: for each attempt, a fresh sandbox is deployed, reached through the
// jumphost, probed, verified and destroyed; its record goes to the journal at once.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/deploy/backend.h"
#include "harness/runner/attempt_record.h"
#include "harness/runner/fanout.h"
#include "harness/runner/journal.h"
#include "harness/runner/matrix.h"
#include "harness/runner/peer_board.h"
#include "harness/runner/run_state.h"
#include "harness/runner/sandbox_channel.h"

namespace isoharness::runner {

// What a job works with: the run's settings (read only), the backend that deploys its
// sandboxes, the journal its records go to, how it reaches a sandbox (the run's JumpPool;
// a fake in unit tests) and the run's state. Everything referred to outlives the jobs
// (RunSession owns it). Built by RunSession::jobs(); the caller adds the fan-out and the
// progress line.
struct JobContext {
  const RunSettings& settings;
  deploy::Backend& backend;
  Journal& journal;
  SandboxReach& reach;
  RunState& state;
  // Fan-out (fanout.h): how many deploy at once (none: no bound), and where finished
  // sandboxes are torn down (none: at once, by the job).
  DeployGate* deploy_gate = nullptr;
  Background* teardowns = nullptr;
  // The run's board of live sandboxes that others try as peers (peer_board.h); none: no
  // peer phase (unit tests of other phases).
  PeerBoard* peers = nullptr;
  // Progress line callback: (record) after each sandbox.
  std::function<void(const nlohmann::json&)> on_sandbox;
};

// The backend request for one attempt of a job (the settings' weakening hook applied).
deploy::SandboxRequest make_request(const Job& job, int attempt, const std::string& name,
                                    const RunSettings& settings);

// One attempt of the job: deploy, reach, probe, verify, tear down (or hand the sandbox to
// the context's teardowns). Never throws: a failure is the record's error, and a
// RunStoppingError also stops the run (ctx.state). resolver_instance: what the previous
// attempt's sandbox resolved (fresh_dns); updated for the next.
AttemptRecord run_attempt(const Job& job, int attempt, JobContext& ctx, std::string& resolver_instance);

// Runs every attempt of the job, each record to the journal and on_sandbox. Never throws.
// Returns how many attempts it recorded (fewer than job.attempts once the run stopped).
int run_job(const Job& job, JobContext& ctx);

}  // namespace isoharness::runner
