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

void add_sandbox_options(CLI::App* sub, const SandboxOptions& o) {
  sub->add_option("--backend", o.backend,
                  "Backend: local (real runc/runsc on this machine) or hawk (a deployment, through its CLI)")
      ->capture_default_str()
      ->check(CLI::IsMember({"local", "hawk"}));
  sub->add_option("--deployment", o.deployment,
                  "Deployment profile (default: <scenarios-dir>/deployments/<backend>.yaml)");
  CLI::Option* scenarios_dir = sub->add_option(
      "--scenarios-dir", o.scenarios_dir,
      "Where the default scenarios and profiles live (default: $ISOHARNESS_SCENARIOS_DIR, else "
      "<prefix>/share/isoharness/scenarios, else the source tree's; `local doctor` shows which)");
  // Not given: the default comes from harness/common/install_paths.h; empty when none is
  // found, and the command then says where it looked.
  sub->parse_complete_callback([scenarios_dir, &target = o.scenarios_dir] {
    if (scenarios_dir->count() > 0) return;
    ResolvedPath found = resolve_path(kScenariosDir);
    target = found.found() ? found.path : "";
  });
  sub->add_option("--out", o.out_dir, "Output directory for result.json and the reports")
      ->capture_default_str();
  sub->add_option("--isoprobe-bundle", o.isoprobe_bundle,
                  "Directory of the isoprobe bundle (default: $ISOHARNESS_PROBE_DIR, else "
                  "<prefix>/lib/isoharness/isoprobe-bundle, else the build tree's)");
  sub->add_flag("--accept-new-host-keys", o.accept_new_host_keys,
                "Accept (and record) host keys that nothing pins; a changed key is always refused");
}

}  // namespace isoharness::cli
