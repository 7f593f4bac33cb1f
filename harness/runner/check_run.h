// `isoharness check`: verify one sandbox that is already running (a human baseliner's, one
// made by hand, one from `isoharness local up`) against one item of a plan, reached through
// the jumphost its `ssh -J …` line names, with the same probes, checks, reports and exit
// codes as `run`. Nothing is deployed and nothing is torn down.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/deploy/local/run_state.h"
#include "harness/deploy/node_view.h"
#include "harness/runner/runner.h"

namespace isoharness::runner {

struct CheckConfig {
  // backend existing; accept_new_host_keys is refused beside known_hosts; deployment_path
  // empty: <scenarios_dir>/deployments/local.yaml, else the one beside the scenario
  SandboxCommand command{.backend = scenario::BackendKind::existing};
  std::string scenario_path;  // a scenario or a bare eval-set config
  std::string item_id;        // as `plan --format json` prints it
  std::string runtime;        // "runc" / "gvisor"; empty: as the plan resolves the item
  std::string ssh_line;       // "ssh -J user@jump[:port] … user@sandbox"
  std::string identity_file;  // empty: the line's -i, else ~/.ssh/id_ed25519
  std::string known_hosts;    // pinned keys for the jumphost and the sandbox
  // The node's view (`--node-view`): a file, or an executable run with node_view_args as
  // its arguments (argv, no shell) whose output is the document; empty: none.
  std::string node_view;
  std::vector<std::string> node_view_args;
  // Where `isoharness local up` keeps its runs: without --node-view, a sandbox found there
  // (deploy/local/up_record.h) is judged on the local node's view of its containers.
  std::string local_state_dir = deploy::local::kDefaultStateRoot;
};

// The node's view `--node-view` names, read (a file) or asked (a program, deadline 60 s,
// output bounded). What cannot be read is a view marked incomplete naming why, so the
// posture checks it should witness are unwitnessed; nullopt when none was named.
std::optional<deploy::NodeView> given_node_view(const std::string& source,
                                                const std::vector<std::string>& args);

// Throws UserError for bad input (an unknown item, an ssh line outside the contract, no
// way to pin a host key); everything else is in the outcome, as for `run`.
RunOutcome check(const CheckConfig& config);

}  // namespace isoharness::runner
