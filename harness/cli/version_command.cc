#include <cstdio>

#include "harness/cli/commands.h"
#include "harness/common/build_info.h"
#include "harness/common/error.h"
#include "harness/common/install_paths.h"

namespace isoharness::cli {

// "isoharness 0.1.0 (<git revision>)": the version is the project's, which is also the
// Debian package's (cmake/isoharness_install.cmake). The second line says where this copy
// runs from, so an installed package and a build tree are told apart at a glance.
Command version_command(CLI::App& app) {
  CLI::App* sub =
      app.add_subcommand("version", "Print the tool version, git revision and where it runs from");
  return {sub, [] {
            std::printf("isoharness %s (%s)\n", isoharness_build_version(), isoharness_build_revision());
            const PathContext here = PathContext::of_this_process();
            const std::string prefix = install_prefix_of(here.exe);
            std::printf("binary: %s%s\n", here.exe.c_str(),
                        prefix.empty() ? "" : (" (install prefix " + prefix + ")").c_str());
            return kExitPass;
          }};
}

}  // namespace isoharness::cli
