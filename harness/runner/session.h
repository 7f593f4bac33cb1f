// A run session: what every command that reaches sandboxes shares, in one place. It owns
// the run id, the signal guard, the login key, the journal with the result header, the
// backend (and so the teardown of everything it made), and the mapping from the verdict to
// the exit code. `run` and `check` are short sequences over it:
//
//   RunSession s(setup);                 // run id, SIGINT/SIGTERM guard, key, host-key policy
//   s.open_journal(header);              // result header: context, plans, findings, skipped
//   s.settings().egress_deadline = ...;  // anything the command adds, before jobs start
//   if (s.start_backend()) { JobContext ctx = s.jobs(); ...run_job(job, ctx)... }
//   s.stop_backend();                    // jump connections closed, every sandbox destroyed
//   RunOutcome o = s.finish(planned);    // result.json, reports, summary line, exit code
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness/deploy/backend.h"
#include "harness/runner/journal.h"
#include "harness/runner/jump_pool.h"
#include "harness/runner/run_state.h"
#include "harness/runner/run_support.h"
#include "harness/runner/runner.h"
#include "harness/runner/sandbox_command.h"
#include "harness/runner/sandbox_job.h"
#include "harness/scenario/scenario.h"

namespace isoharness::runner {

// The command's shared config as given, and what the command resolved from it. Its
// backend, out_dir, argv, accept_new_host_keys and posture_deadline are the command's;
// the profile, deployment path and bundle are found before the session starts.
struct SessionSetup {
  SandboxCommand command;
  const scenario::DeploymentProfile* profile = nullptr;
  std::string deployment_path;  // resolved
  std::string isoprobe_bundle;  // resolved
};

// Plans, findings and skipped jobs for the result header.
struct HeaderParts {
  std::string kind;  // run.kind when not empty ("selftest")
  std::vector<std::string> scenario_names;
  nlohmann::json plans = nlohmann::json::object();
  nlohmann::json findings = nlohmann::json::array();
  nlohmann::json skipped = nlohmann::json::array();
};

class RunSession {
 public:
  // Throws InfraError when no key can be made.
  explicit RunSession(SessionSetup setup);
  ~RunSession();
  RunSession(const RunSession&) = delete;
  RunSession& operator=(const RunSession&) = delete;

  const std::string& run_id() const { return run_id_; }
  // The run's settings, filled in by the session (key, host-key policy, the backend's
  // targets) and the command; changed only before the jobs that read them start.
  RunSettings& settings() { return settings_; }
  RunState& state() { return state_; }
  // What the jobs work with, once the backend runs (start_backend returned true). The
  // first call opens the jump pool with the settings' login as it is then.
  JobContext jobs();

  void open_journal(const HeaderParts& parts);
  Journal& journal() { return *journal_; }  // once open_journal was called
  // Makes the backend named by the setup (deploy/factory), or takes the one given. An
  // InfraError becomes the run's infrastructure error; returns whether a backend runs.
  bool start_backend();
  bool start_backend(std::unique_ptr<deploy::Backend> backend);
  // Closes the jump connections and destroys the backend (every sandbox, the world).
  void stop_backend();
  // An infrastructure failure met while the backend ran: the verdict becomes error.
  void record_infra_error(std::string what) { infra_error_ = std::move(what); }
  const std::string& infra_error() const { return infra_error_; }
  // Stops the backend, then reads the result document back from the journal, with the
  // backend's context and the time the run finished. For commands that judge the run
  // themselves (parity, selftest); `run` and `check` use finish.
  nlohmann::json collect();
  // collect, then the summary, reports and the exit code of a posture run.
  RunOutcome finish(int planned_sandboxes);

 private:
  void use_login(const scenario::DeploymentProfile& profile);

  SessionSetup setup_;
  std::string run_id_;
  SignalGuard signals_;
  std::optional<RunKey> key_;
  std::unique_ptr<Journal> journal_;
  std::unique_ptr<deploy::Backend> backend_;
  RunSettings settings_;
  RunState state_;
  std::unique_ptr<JumpPool> jumps_;
  PeerBoard peers_;  // the run's live sandboxes that others try as peers
  // The agent's packed streams, made while the first sandboxes deploy (transport::prepack_dir);
  // joined before the session goes.
  std::thread prepack_;
  nlohmann::json backend_context_ = nlohmann::json::object();
  std::string infra_error_;
};

// Findings of one plan document, flattened for the result (scenario, item_id, code, ...).
void add_plan_findings(const std::string& scenario, const policy::Plan& plan, nlohmann::json& findings);

// A note among the findings for each runtime escape table runtime_version reads that was
// reviewed more than 180 days before now (harness/verify/runtime_escapes.h).
void add_escape_table_findings(nlohmann::json& findings);

// The result's "summary": counts, and the verdict (error when the infrastructure failed, a
// sandbox errored, the run was interrupted, or fewer sandboxes than planned were recorded;
// no planned count, no such comparison).
nlohmann::json summarise(const nlohmann::json& result, std::optional<int> planned_sandboxes,
                         const std::string& infra_error, bool interrupted);
// The exit code of a result's verdict (kExitPass, kExitVerdictFailed, kExitInfrastructure).
int exit_code_of(const nlohmann::json& result);
// "PASS: 23 sandboxes and 6 refusal(s), 997 checks: …" on stderr.
void print_summary_line(const nlohmann::json& result, const std::string& result_path);

// `isoharness report JOURNAL --out DIR`: result.json and the reports of a run that did not
// finish, from its journal (the one in its --out, or a copy kept under kKeptJournalDir).
// Its verdict is always error, since the journal cannot say what the run never reached;
// the checks it holds are reported as they were. Throws UserError for a file that is no
// journal.
RunOutcome report_from_journal(const std::string& journal_path, const std::string& out_dir);

}  // namespace isoharness::runner
