// The hawk backend: one sandbox = one human-baseline eval on a real deployment.
//
//   login:   before the first start with each node class's environment, `hawk auth
//            access-token` (hawk_cli.h): no usable token stops the run before any eval is
//            started; a CLI without that command is noted and its first call tells instead.
//   deploy:  write the one-item eval-set config, `hawk human eval start` (plus the
//            profile's hawk.start_args), then alternate `hawk human eval ssh-command ID
//            --timeout T` with `hawk status ID --hours 0` until the sandbox answers or
//            hawk.start_timeout_s passes (then: the sandbox pods' phase, reasons and events
//            and the end of `hawk logs ID`, marked as platform output, in the error, and the
//            eval deleted). A CLI that starts its login stops the deploy at once.
//   destroy: `hawk delete ID`, always; evals still live when the backend goes are deleted too.
//
// The route comes from the ssh-command line; the jumphost key is the profile's pin, a
// sandbox key is accepted on first use (through the pinned jumphost) or must be pinned.
//
// witness: with the profile's witness: section, after each probe run one bounded, timed-out
// HTTP GET of the operator's witness log (hawk_witness.cc, witness_http.h).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "harness/deploy/backend.h"
#include "harness/deploy/hawk/hawk_cli.h"
#include "harness/deploy/hawk/hubble_flows.h"
#include "harness/deploy/hawk/start_retry.h"
#include "harness/deploy/hawk/witness_cursor.h"
#include "harness/scenario/scenario.h"

namespace isoharness::deploy::hawk {

// Without a witness: section (Hubble only): the probe window's widening and the pause
// before reading, as the witness section's defaults.
inline constexpr int kDefaultClockSlackMs = 1000;
inline constexpr int kDefaultSettleMs = 300;
// How many times the arrival view reads the operator's log, a heartbeat period apart, for a
// heartbeat that covers the probe's window's end.
inline constexpr int kCoverReads = 6;
// How often the operator's log is read while the harness waits for its next heartbeat.
inline constexpr int kSettlePollMs = 50;

struct HawkOptions {
  std::string run_id;
  std::string work_dir;                      // where the submitted configs are written
  std::vector<EgressTarget> targets;         // what the probes try
  std::atomic<bool>* interrupted = nullptr;  // stops the wait for a sandbox
  HawkCli::Runner runner;                    // empty: run_command (tests replace it)
  std::chrono::seconds poll_step{15};        // ssh-command --timeout per round
  // Pauses between tries of a start (start_retry.h): the first one's length, and how a
  // pause is spent (empty: sleeping, in short steps that watch `interrupted`).
  std::chrono::milliseconds retry_base{2000};
  std::function<void(std::chrono::milliseconds)> pause;
};

class HawkBackend final : public Backend {
 public:
  HawkBackend(scenario::DeploymentProfile profile, HawkOptions options);
  ~HawkBackend() override;

  std::string name() const override {
    return std::string(scenario::backend_name(scenario::BackendKind::hawk));
  }
  SandboxHandle deploy(const SandboxRequest& request) override;
  void destroy(const SandboxHandle& handle) noexcept override;
  std::optional<RefusalProbe> submit_expecting_refusal(const SandboxRequest& request,
                                                       std::chrono::seconds watch) override;
  std::vector<EgressTarget> egress_targets() const override { return options_.targets; }
  // The profile's operator-run witness (witness: section), its log read over HTTP
  // (hawk_witness.cc), and its Hubble flows (hubble: section, hubble_witness.cc) as the
  // drop point's record in `drops`; nullopt with neither. Hubble without witness: gives an
  // incomplete arrival view (arrivals unobserved) beside its drops.
  std::optional<WitnessView> witness(const SandboxHandle& handle, const std::string& nonce,
                                     std::chrono::system_clock::time_point from,
                                     std::chrono::system_clock::time_point to) const override;
  nlohmann::json context() const override;
  // The profile's kubernetes_api: section: the eval's pods (and runtime classes and
  // network policies when named), read after the probe ran (kubernetes_api_view.cc).
  std::optional<KubernetesApiView> kubernetes_api(const SandboxHandle& handle) const override;

  // Who the sandbox is to Hubble: the ssh-command line's address, when it is one, and the
  // pod name and namespace `hawk status` gave (facts.sandbox_pod).
  static FlowSubject flow_subject(const SandboxHandle& handle);

 private:
  HawkCli cli_for(const std::string& node_class) const;
  // The login pre-flight for this node class, once per run (its answer kept): throws
  // RunStoppingError when the CLI has no usable login.
  void require_login(const std::string& node_class, const HawkCli& cli);
  std::string write_config(const SandboxRequest& request) const;
  Started start_eval(const HawkCli& cli, const std::string& config, const std::string& name,
                     StartTally& tally) const;
  void pause_between_tries(std::chrono::milliseconds pause) const;
  std::string wait_for_ssh_line(const HawkCli& cli, const std::string& id) const;
  void remove(const HawkCli& cli, const std::string& id) noexcept;
  void settle(const SandboxHandle& handle, std::size_t& budget) const;
  WitnessView arrival_view(const SandboxHandle& handle, const std::string& nonce, long long from_ms,
                           long long to_ms, std::size_t& budget) const;
  Expected<std::string> hubble_text(long long from_ms, long long to_ms) const;
  Expected<std::string> kube_api_text(const scenario::KubeApiSource& source, const std::string& ns,
                                      const std::string& eval_set_id, std::string& who) const;
  DropView hubble_drops(const SandboxHandle& handle, long long from_ms, long long to_ms,
                        long long slack_ms) const;

  scenario::DeploymentProfile profile_;
  scenario::HawkSettings settings_;
  HawkOptions options_;
  mutable std::mutex mutex_;
  std::set<std::pair<std::string, std::string>> live_;  // (eval set id, node class)
  std::mutex login_mutex_;                              // one pre-flight at a time
  std::map<std::string, std::string> login_checked_;    // node class -> "" or why not logged in
  // Where the harness is in each operator witness log (by its URL, http:// or sftp://),
  // read incrementally.
  mutable std::mutex witness_mutex_;
  mutable std::map<std::string, WitnessLogCursor> cursors_;
};

}  // namespace isoharness::deploy::hawk
