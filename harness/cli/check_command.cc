// `isoharness check SCENARIO --item ID --ssh "ssh -J …"`: verify one sandbox that is already
// running against the item's plan, the way `run` verifies the sandboxes it makes.
#include <cstdio>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/runner/check_run.h"

namespace isoharness::cli {

Command check_command(CLI::App& app, const CommandLine& line) {
  auto cfg = std::make_shared<runner::CheckConfig>();
  CLI::App* sub = app.add_subcommand(
      "check",
      "Verify one running sandbox (a human baseliner's, one made by hand, one from `isoharness local up`) "
      "against one item of a scenario's plan, reached with its `ssh -J …` line: same probes, checks, reports "
      "and exit codes as run. Nothing is deployed or torn down. Exit 0 pass, 1 a check failed, 2 bad input, "
      "3 infrastructure failure.");
  sub->add_option("scenario", cfg->scenario_path, "Scenario file or bare eval-set config")->required();
  sub->add_option("--item", cfg->item_id, "Item id, as `isoharness plan --format json` prints it")
      ->required();
  sub->add_option(
         "--ssh", cfg->ssh_line,
         "The sandbox's ssh command: ssh -J [user@]jump[:port] [-p PORT] [-i FILE] [-o K=V] [-l USER] "
         "[user@]host")
      ->required();
  sub->add_option("--runtime", cfg->runtime,
                  "Judge as runc or gvisor (default: as the plan resolves the item)")
      ->check(CLI::IsMember({"runc", "gvisor"}));
  sub->add_option("--identity", cfg->identity_file,
                  "Private key (default: the line's -i, else ~/.ssh/id_ed25519)");
  auto* kh =
      sub->add_option("--known-hosts", cfg->known_hosts, "known_hosts file pinning the jumphost and sandbox");
  sub->add_option("--node-view", cfg->node_view,
                  "The node's view of the sandbox (isoharness.node-view/v1): a file, or a program to run "
                  "(an executable path, started without a shell, with each --node-view-arg as one argument) "
                  "whose output is the document. Without it, posture checks are unwitnessed unless the "
                  "profile says node_view: none");
  sub->add_option("--node-view-arg", cfg->node_view_args, "One argument of the --node-view program (repeat)")
      ->allow_extra_args(false);
  sub->add_option("--local-state-dir", cfg->local_state_dir,
                  "Where `isoharness local up` keeps its runs: without --node-view, a sandbox of a live run "
                  "found there by its route (jumphost, sandbox, host keys) is judged on this node's view of "
                  "its containers")
      ->capture_default_str();
  add_sandbox_options(sub, cfg->command, line, BackendFlag::existing);
  add_report_options(sub, cfg->command, ReportFlags::all);
  sub->get_option("--accept-new-host-keys")->excludes(kh);

  return {sub, [cfg]() -> int {
            auto outcome = runner::check(*cfg);
            for (const auto& r : outcome.reports) std::fprintf(stderr, "wrote %s\n", r.c_str());
            return outcome.exit_code;
          }};
}

}  // namespace isoharness::cli
