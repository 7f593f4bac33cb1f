// `isoharness parity [SCENARIO]`: workload timings under runc vs gVisor on tier and
// non-tier nodes, with confidence intervals and a human-baseline validity verdict.
#include <cstdio>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/common/error.h"
#include "harness/runner/parity_run.h"

namespace isoharness::cli {

Command parity_command(CLI::App& app, const CommandLine& line) {
  auto cfg = std::make_shared<runner::ParityConfig>();
  auto max_minutes = std::make_shared<int>(20);
  CLI::App* sub = app.add_subcommand(
      "parity",
      "Time the scenario's workloads in one sandbox per cell (RUNTIME/NODE_CLASS), interleaved rounds, and "
      "compare every candidate cell with the baseline: ratio, 95% interval, and a verdict against the "
      "scenario's tolerance. Exit 0 parity or inconclusive, 1 regression, 2 bad input, 3 infrastructure.");
  sub->add_option("scenario", cfg->scenario_path,
                  "Scenario file (default: <scenarios-dir>/parity/default.yaml)");
  add_sandbox_options(sub, cfg->command, line);
  add_report_options(sub, cfg->command, ReportFlags::metrics);
  sub->add_option("--baseline", cfg->baseline, "Baseline cell")->capture_default_str();
  sub->add_option(
      "--candidate", cfg->candidates,
      "Candidate cell, repeatable (default: every other cell of the scenario's matrix; the baseline "
      "itself gives an A/A run, the noise floor)");
  sub->add_option("--rounds", cfg->rounds,
                  "Rounds (default 12, or 5 with --quick, or the budget 24 with --until-decided)")
      ->check(CLI::Range(1, 200));
  sub->add_flag("--quick", cfg->quick, "Fewer rounds and shorter runs: a smoke check");
  sub->add_flag("--until-decided", cfg->until_decided,
                "Rounds in batches until every cell's verdict is decided or --rounds (default 24) are spent; "
                "each look judged at a Pocock-type alpha-spending share of the confidence, so early stopping "
                "keeps the error rate");
  sub->add_option("--batch", cfg->batch, "Rounds per batch with --until-decided")
      ->capture_default_str()
      ->check(CLI::Range(2, 50));
  sub->add_flag("--aa", cfg->aa,
                "Also time a twin of the baseline cell: the run's A/A noise, which "
                "`baselines` uses to label a series unstable");
  sub->add_option("--workloads", cfg->workloads,
                  "Comma-separated workloads (default: the scenario's); ssh_rtt is timed by the harness")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--max-minutes", *max_minutes, "Stop starting rounds after this long")
      ->capture_default_str()
      ->check(CLI::Range(1, 240));
  return {sub, [cfg, max_minutes]() -> int {
            cfg->max_duration = std::chrono::minutes(*max_minutes);
            auto outcome = runner::run_parity(*cfg);
            for (const auto& r : outcome.reports) std::fprintf(stderr, "wrote %s\n", r.c_str());
            return outcome.exit_code;
          }};
}

}  // namespace isoharness::cli
