#include "harness/selftest/catalogue.h"

#include <algorithm>
#include <fstream>
#include <set>

#include "harness/common/error.h"

namespace isoharness::selftest {
namespace {

using nlohmann::json;

json& security(json& service) {
  return service["securityContext"];
}

// Keeps one capability besides drop ALL, as a renderer that forgot a line would.
std::function<void(json&)> keep_capability(const std::string& cap) {
  return [cap](json& service) { security(service)["capabilities"] = {{"drop", {"ALL"}}, {"add", {cap}}}; };
}

std::function<std::string(const std::string&)> applicable_everywhere() {
  return [](const std::string&) { return std::string(); };
}

std::function<std::string(const std::string&)> not_under(const std::string& runtime, const std::string& why) {
  return [runtime, why](const std::string& r) { return r == runtime ? why : std::string(); };
}

const char* const kNoHostKernelNamespaces =
    "gVisor's sentry keeps its own process table whatever the spec says: the host's PID namespace "
    "cannot be shared into a gVisor sandbox";

// kptr_restrict 2 hides kernel addresses even from CAP_SYSLOG: kept CAP_SYSLOG then
// exposes nothing, and there is nothing for the kallsyms check to catch.
std::string kallsyms_applicability(const std::string& runtime) {
  if (runtime == "gvisor")
    return "gVisor serves its own /proc/kallsyms, which lists no host symbol whatever the capabilities";
  std::ifstream in("/proc/sys/kernel/kptr_restrict");
  int level = -1;
  if (!(in >> level)) return "cannot read /proc/sys/kernel/kptr_restrict on this host";
  if (level >= 2) return "kernel.kptr_restrict = 2 on this host: addresses stay hidden even with CAP_SYSLOG";
  return "";
}

std::vector<Weakening> build() {
  std::vector<Weakening> w;
  w.push_back({"cap_sys_admin_kept",
               "CAP_SYS_ADMIN kept (drop ALL, add SYS_ADMIN)",
               {"capability:CAP_SYS_ADMIN", "capability_bounding", "capabilities"},
               applicable_everywhere(),
               keep_capability("SYS_ADMIN"),
               {},
               1,
               false,
               true});
  w.push_back({"net_raw_kept",
               "CAP_NET_RAW kept under strict (drop ALL, add NET_RAW)",
               {"capability_bounding", "capabilities"},
               not_under("gvisor",
                         "runsc removes CAP_NET_RAW from every set unless started with --net-raw, "
                         "so the kept capability never reaches a gVisor sandbox"),
               keep_capability("NET_RAW"),
               {},
               1,
               false,
               false});
  w.push_back({"privilege_escalation_allowed",
               "no no_new_privs (allowPrivilegeEscalation: true)",
               {"no_new_privs"},
               not_under("gvisor",
                         "this gVisor (runsc 20221219) sets no_new_privs in every sandbox whatever the "
                         "spec says (FIELD-NOTES): escalation is neither possible nor observable"),
               [](json& s) { security(s)["allowPrivilegeEscalation"] = true; },
               {},
               1,
               false,
               false});
  w.push_back({"seccomp_unconfined",
               "seccomp Unconfined on the host kernel",
               {"seccomp"},
               not_under("gvisor",
                         "runsc applies no OCI seccomp filter here (no --oci-seccomp): Seccomp reads 0 in "
                         "every gVisor sandbox and verify excuses it as emulated; syscalls never reach "
                         "the host kernel"),
               [](json& s) {
                 security(s)["seccompProfile"] = {{"type", "Unconfined"}};
               },
               {},
               1,
               false,
               false});
  w.push_back({"runc_instead_of_gvisor",
               "runtime class dropped: runc while the plan says gVisor",
               {"kernel"},
               not_under("runc", "the plan of the host-kernel item already names the node's default runtime"),
               [](json& s) { s.erase("runtimeClassName"); },
               {},
               1,
               false,
               true});
  w.push_back(
      {"root_under_non_root",
       "uid 0 under non_root",
       {"uid"},
       [](const std::string&) {
         return std::string(
             "the local backend's sandbox process is sshd running as the sandbox user, which cannot serve "
             "a login as uid 0; it refuses runAsUser 0 before deploying (other_user_under_non_root "
             "changes the user instead)");
       },
       nullptr,
       {},
       1,
       false,
       false});
  w.push_back({"other_user_under_non_root",
               "a different user (uid 1001) under non_root",
               {"uid"},
               applicable_everywhere(),
               [](json& s) { security(s)["runAsUser"] = 1001; },
               {},
               1,
               false,
               false});
  w.push_back({"writable_root",
               "writable root under read_only_root",
               {"root_filesystem", "root_not_writable"},
               applicable_everywhere(),
               [](json& s) { security(s)["readOnlyRootFilesystem"] = false; },
               {},
               1,
               false,
               false});
  w.push_back({"egress_metadata",
               "egress to the metadata address",
               {"egress:metadata"},
               applicable_everywhere(),
               nullptr,
               {"nft:allow-metadata"},
               1,
               false,
               true});
  w.push_back({"egress_unlisted_host",
               "egress to an internet host no list names, under strict",
               {"egress:blocked-addr", "egress:blocked"},
               applicable_everywhere(),
               nullptr,
               {"nft:allow-unlisted-host"},
               1,
               false,
               false});
  w.push_back({"other_sandbox_reachable",
               "another sandbox of the node reachable",
               {"egress:peer-sandbox"},
               applicable_everywhere(),
               nullptr,
               {"nft:allow-sandboxes"},
               1,
               true,
               false});
  w.push_back({"cluster_api_reachable",
               "the cluster API reachable",
               {"egress:cluster-api"},
               applicable_everywhere(),
               nullptr,
               {"nft:allow-cluster-api"},
               1,
               false,
               false});
  w.push_back({"dns_under_strict",
               "DNS answers for an external name under strict",
               {"egress:dns", "egress:resolver"},
               applicable_everywhere(),
               nullptr,
               {"nft:allow-dns"},
               1,
               false,
               false});
  w.push_back({"runtime_socket_mounted",
               "a container runtime's socket mounted in",
               {"runtime_socket"},
               applicable_everywhere(),
               nullptr,
               {"oci:runtime-socket"},
               1,
               false,
               true});
  w.push_back({"host_pid_namespace",
               "the host's PID namespace shared",
               {"pid_namespace"},
               not_under("gvisor", kNoHostKernelNamespaces),
               nullptr,
               {"oci:host-pid"},
               1,
               false,
               false});
  w.push_back(
      {"host_network_namespace",
       "the host's network namespace shared",
       {"host_namespaces"},
       [](const std::string&) {
         return std::string(
             "the local backend reaches a sandbox only through its own namespace's address: one in the "
             "host's network namespace cannot be reached through the jumphost to be probed "
             "(host_uts_namespace shares a host namespace that can)");
       },
       nullptr,
       {},
       1,
       false,
       false});
  w.push_back({"host_uts_namespace",
               "the host's UTS namespace (hostname) shared",
               {"host_namespaces"},
               applicable_everywhere(),
               nullptr,
               {"oci:host-uts"},
               1,
               false,
               false});
  w.push_back({"host_device",
               "a host device (/dev/kmsg) passed in",
               {"host_devices"},
               applicable_everywhere(),
               nullptr,
               {"oci:host-device"},
               1,
               false,
               false});
  w.push_back({"kallsyms_unmasked",
               "/proc/kallsyms addresses readable (CAP_SYSLOG kept)",
               {"kallsyms"},
               kallsyms_applicability,
               keep_capability("SYSLOG"),
               {},
               1,
               false,
               false});
  w.push_back({"debugfs_mounted",
               "debugfs mounted at /sys/kernel/debug",
               {"debugfs"},
               applicable_everywhere(),
               nullptr,
               {"oci:debugfs"},
               1,
               false,
               false});
  w.push_back({"attempt_disk_reused",
               "attempt 2 reuses attempt 1's home directory",
               {"fresh_sandbox"},
               applicable_everywhere(),
               nullptr,
               {"oci:reused-home"},
               2,
               false,
               false});
  return w;
}

}  // namespace

const std::vector<Weakening>& catalogue() {
  static const std::vector<Weakening> all = [] {
    auto w = build();
    std::set<std::string> names;
    for (const auto& e : w) ISOHARNESS_CHECK(names.insert(e.name).second);
    return w;
  }();
  return all;
}

std::vector<const Weakening*> select(const std::vector<std::string>& names, bool quick) {
  std::vector<const Weakening*> out;
  std::string unknown;
  for (const auto& n : names) {
    auto it =
        std::find_if(catalogue().begin(), catalogue().end(), [&](const Weakening& w) { return w.name == n; });
    if (it == catalogue().end()) unknown += (unknown.empty() ? "" : ", ") + n;
  }
  if (!unknown.empty()) {
    std::string known;
    for (const auto& w : catalogue()) known += (known.empty() ? "" : ", ") + w.name;
    throw UserError("--only: no weakening named " + unknown + " (known: " + known + ")");
  }
  for (const auto& w : catalogue()) {
    bool chosen = names.empty() ? (!quick || w.quick) : std::count(names.begin(), names.end(), w.name) > 0;
    if (chosen) out.push_back(&w);
  }
  return out;
}

}  // namespace isoharness::selftest
