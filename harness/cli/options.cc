#include "harness/cli/commands.h"

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
  sub->add_option("--scenarios-dir", o.scenarios_dir, "Where the default scenarios and profiles live")
      ->capture_default_str();
  sub->add_option("--out", o.out_dir, "Output directory for result.json and the reports")->capture_default_str();
  sub->add_option("--isoprobe-bundle", o.isoprobe_bundle,
                  "Directory of the isoprobe bundle (default: from the build tree)");
  sub->add_flag("--accept-new-host-keys", o.accept_new_host_keys,
                "Accept (and record) host keys that nothing pins; a changed key is always refused");
}

}  // namespace isoharness::cli
