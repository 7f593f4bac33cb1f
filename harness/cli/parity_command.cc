// PLACEHOLDER: replaced by the issue that builds `isoharness parity`.
#include "harness/cli/commands.h"
#include "harness/common/error.h"

namespace isoharness::cli {

Command parity_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("parity", "(not built yet)");
  sub->allow_extras();
  return {sub, []() -> int { throw InfraError("'parity' is not built yet"); }};
}

}  // namespace isoharness::cli
