#include <cstdio>

#include "harness/cli/commands.h"
#include "harness/common/error.h"

namespace isoharness::cli {

Command version_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("version", "Print the tool version and git revision");
  return {sub, [] {
            std::printf("isoharness %s (%s)\n", ISOHARNESS_VERSION, ISOHARNESS_GIT_REVISION);
            return kExitPass;
          }};
}

}  // namespace isoharness::cli
