// `isoharness run [SCENARIO…]`: deploy, probe, verify, report.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/common/error.h"
#include "harness/runner/runner.h"

namespace isoharness::cli {

Command run_command(CLI::App& app, const CommandLine& line) {
  auto cfg = std::make_shared<runner::RunConfig>();
  auto attempts = std::make_shared<int>(0);
  CLI::App* sub = app.add_subcommand(
      "run",
      "Deploy the scenarios' sandboxes, reach each through the jumphost, run isoprobe, verify the isolation "
      "against the plan, and write result.json, report.md, report.html and junit.xml. With no scenario: "
      "every scenario in "
      "scenarios/. Exit 0 all pass, 1 a check failed, 2 bad input, 3 infrastructure failure.");
  sub->add_option("scenarios", cfg->scenario_paths, "Scenario files (default: the set in --scenarios-dir)");
  add_sandbox_options(sub, cfg->command, line);
  add_report_options(sub, cfg->command, ReportFlags::all);
  sub->add_option("--runtimes", cfg->runtimes,
                  "Comma-separated runtimes to run (runc,gvisor); default: the scenario's matrix")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(CLI::IsMember({"runc", "gvisor"}));
  sub->add_option("--node-classes", cfg->node_classes,
                  "Comma-separated node classes; default: the scenario's matrix")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--attempts", *attempts, "Attempts per item (default: the scenario's matrix)")
      ->check(CLI::Range(1, 20));
  sub->add_option("--parallel", cfg->parallel,
                  "Sandbox jobs at once (a job's attempts run one after another)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  sub->add_option("--deploy-parallel", cfg->deploy_parallel, "Deploys at once (default: two per CPU)")
      ->check(CLI::Range(1, 64));
  sub->add_flag("--deny-known-risks", cfg->deny_known_risks,
                "Refuse plans with known risks (e.g. a GPU service without gVisor)");

  return {sub, [cfg, attempts]() -> int {
            if (*attempts > 0) cfg->attempts = *attempts;
            cfg->color = ::isatty(2) && std::getenv("NO_COLOR") == nullptr;
            auto outcome = runner::run(*cfg);
            for (const auto& r : outcome.reports) std::fprintf(stderr, "wrote %s\n", r.c_str());
            return outcome.exit_code;
          }};
}

}  // namespace isoharness::cli
