// PLACEHOLDER: replaced by the issue that builds `isoharness plan`.
#include "harness/cli/commands.h"
#include "harness/common/error.h"

namespace isoharness::cli {

Command plan_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("plan", "(not built yet)");
  sub->allow_extras();
  return {sub, []() -> int { throw InfraError("'plan' is not built yet"); }};
}

}  // namespace isoharness::cli
