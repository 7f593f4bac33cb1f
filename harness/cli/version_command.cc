#include <cstdio>

#include "harness/cli/commands.h"
#include "harness/common/build_info.h"
#include "harness/common/error.h"

namespace isoharness::cli {

Command version_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("version", "Print the tool version and git revision");
  return {sub, [] {
            std::printf("isoharness %s (%s)\n", isoharness_build_version(), isoharness_build_revision());
            return kExitPass;
          }};
}

}  // namespace isoharness::cli
