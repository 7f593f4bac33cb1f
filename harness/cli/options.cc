#include "harness/cli/commands.h"
#include "harness/common/install_paths.h"

namespace isoharness::cli {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

void add_sandbox_options(CLI::App* sub, runner::SandboxCommand& command, const CommandLine& line,
                         BackendFlag backend) {
  command.argv = line;
  if (backend == BackendFlag::choose) {
    // Only the backends that deploy, by name (an enum's number is not a name).
    using scenario::BackendKind;
    const std::vector<std::string> deploying{std::string(scenario::backend_name(BackendKind::local)),
                                             std::string(scenario::backend_name(BackendKind::hawk))};
    sub->add_option_function<std::string>(
           "--backend",
           [&command](const std::string& name) {
             const auto kind = scenario::backend_from_name(name);  // IsMember let only a name in
             if (!kind) throw CLI::ValidationError("--backend", "no backend named '" + name + "'");
             command.backend = *kind;
           },
           "Backend: local (real runc/runsc on this machine) or hawk (a deployment, through its CLI)")
        ->default_str(std::string(scenario::backend_name(command.backend)))
        ->check(CLI::IsMember(deploying));
  }
  sub->add_option(
      "--deployment", command.deployment_path,
      backend == BackendFlag::choose
          ? "Deployment profile (default: <scenarios-dir>/deployments/<backend>.yaml)"
          : "Deployment profile: runtime classes, egress targets, hawk pins (default: "
            "<scenarios-dir>/deployments/local.yaml, else deployments/local.yaml beside the scenario)");
  CLI::Option* scenarios_dir = sub->add_option(
      "--scenarios-dir", command.scenarios_dir,
      "Where the default scenarios and profiles live (default: $ISOHARNESS_SCENARIOS_DIR, else "
      "<prefix>/share/isoharness/scenarios, else the source tree's; `local doctor` shows which)");
  // Not given: the default comes from harness/common/install_paths.h; empty when none is
  // found, and the command then says where it looked.
  sub->parse_complete_callback([scenarios_dir, &target = command.scenarios_dir] {
    if (scenarios_dir->count() > 0) return;
    ResolvedPath found = resolve_path(kScenariosDir);
    target = found.found() ? found.path : "";
  });
  sub->add_option("--out", command.out_dir, "Output directory for result.json and the reports")
      ->capture_default_str();
  sub->add_option("--isoprobe-bundle", command.isoprobe_bundle,
                  "Directory of the isoprobe bundle (default: $ISOHARNESS_PROBE_DIR, else "
                  "<prefix>/lib/isoharness/isoprobe-bundle, else the build tree's)");
  sub->add_flag("--accept-new-host-keys", command.accept_new_host_keys,
                "Accept (and record) host keys that nothing pins; a changed key is always refused");
}

}  // namespace isoharness::cli
