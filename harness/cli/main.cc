#include <cstdio>
#include <exception>
#include <vector>

#include "harness/cli/commands.h"
#include "harness/common/error.h"
#include "harness/common/log.h"

int main(int argc, char** argv) {
  using namespace isoharness;
  CLI::App app{
      "isoharness: proves eval sandboxes get the isolation their config asks for, "
      "and measures what it costs in time."};
  app.require_subcommand(1);
  std::string log_level;
  app.add_option("--log-level", log_level,
                 "diagnostic log on stderr: trace, debug, info, warn (default), error, off; "
                 "else $ISOHARNESS_LOG. A run directory always gets the debug log in isoharness.log.");
  const cli::CommandLine line(argv, argv + argc);
  std::vector<cli::Command> commands = {
      cli::version_command(app),        cli::plan_command(app),         cli::local_command(app),
      cli::run_command(app, line),      cli::parity_command(app, line), cli::history_command(app),
      cli::selftest_command(app, line), cli::check_command(app, line),  cli::report_command(app),
      cli::baselines_command(app),      cli::node_view_command(app),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitPass : kExitBadInput;
  }
  for (auto& [sub, action] : commands) {
    if (!sub->parsed()) continue;
    try {
      log::configure(log_level);
      return action();
    } catch (const UserError& e) {
      std::fprintf(stderr, "isoharness: error: %s\n", e.what());
      return kExitBadInput;
    } catch (const InfraError& e) {
      std::fprintf(stderr, "isoharness: infrastructure failure: %s\n", e.what());
      return kExitInfrastructure;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "isoharness: infrastructure failure (unexpected): %s\n", e.what());
      return kExitInfrastructure;
    }
  }
  return kExitBadInput;
}
