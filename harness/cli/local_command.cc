// PLACEHOLDER: replaced by the issue that builds `isoharness local`.
#include "harness/cli/commands.h"
#include "harness/common/error.h"

namespace isoharness::cli {

Command local_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("local", "(not built yet)");
  sub->allow_extras();
  return {sub, []() -> int { throw InfraError("'local' is not built yet"); }};
}

}  // namespace isoharness::cli
