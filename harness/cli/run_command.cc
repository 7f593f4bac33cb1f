// PLACEHOLDER: replaced by the issue that builds `isoharness run`.
#include "harness/cli/commands.h"
#include "harness/common/error.h"

namespace isoharness::cli {

Command run_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("run", "(not built yet)");
  sub->allow_extras();
  return {sub, []() -> int { throw InfraError("'run' is not built yet"); }};
}

}  // namespace isoharness::cli
