// The weakenings of the escape classes the published benchmarks exploit (SandboxEscapeBench,
// SandboxBench): each a value the chart allows (a capability, a hostPath volume, the
// service-account token, procMount) or, where no chart key exists short of privileged, a
// part of a privileged container in the OCI spec (a writable cgroup mount).
#include "harness/selftest/escape_catalogue.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>

#include "harness/common/capability_table.h"

namespace isoharness::selftest {
namespace {

using nlohmann::json;

// Where the host-path weakenings mount from: under the only root the local backend takes
// hostPath sources from (harness/deploy/local/sandbox_spec.h, kHostPathRoot).
constexpr const char* kSelftestHostPath = "/var/lib/isoharness/host-paths/selftest";

std::function<void(json&)> add_capability(const std::string& cap) {
  return [cap](json& service) {
    auto& caps = service["securityContext"]["capabilities"];
    if (!caps.contains("drop")) caps["drop"] = {"ALL"};
    caps["add"] = {cap};
  };
}

std::function<void(json&)> mount_host_path(bool read_only) {
  return [read_only](json& service) {
    service["volumes"].push_back(
        {{"name", "node-data"}, {"hostPath", {{"path", kSelftestHostPath}, {"type", "DirectoryOrCreate"}}}});
    service["volumeMounts"].push_back(
        {{"name", "node-data"}, {"mountPath", "/node-data"}, {"readOnly", read_only}});
  };
}

std::function<std::string(const std::string&)> applicable() {
  return [](const std::string&) { return std::string(); };
}

std::function<std::string(const std::string&)> not_under_gvisor(const std::string& why) {
  return [why](const std::string& r) { return r == "gvisor" ? why : std::string(); };
}

const char* const kRunscRefuses =
    "runsc 20221219 refuses to start a sandbox whose spec names CAP_BPF, CAP_PERFMON or "
    "CAP_CHECKPOINT_RESTORE (\"unknown capability\"); `local up` refuses it first, naming the "
    "control: the class cannot reach a gVisor sandbox";

// runc can grant only what isoharness itself may hold: on a machine whose bounding set
// lacks a capability (a container host), `add: [ALL]` cannot start ("unable to apply caps").
std::string every_capability_applicability(const std::string& runtime) {
  if (runtime == "gvisor") return kRunscRefuses;
  std::ifstream status("/proc/self/status");
  std::string line, missing;
  while (std::getline(status, line)) {
    if (line.rfind("CapBnd:", 0) != 0) continue;
    const std::uint64_t bounding = std::strtoull(line.c_str() + 7, nullptr, 16);
    for (std::size_t bit = 0; bit < kCapabilityNames.size(); ++bit)
      if (!(bounding >> bit & 1U))
        missing += (missing.empty() ? "" : ", ") + std::string(kCapabilityNames[bit]);
  }
  if (!missing.empty())
    return "isoharness's own bounding set on this machine lacks " + missing +
           ", so runc cannot start a container holding every capability (local up refuses it by name)";
  return "";
}

// long-function: table. One designated initializer per weakening.
void append_capabilities(std::vector<Weakening>& w) {
  w.push_back({.name = "cap_sys_module_kept",
               .what = "CAP_SYS_MODULE kept (drop ALL, add SYS_MODULE)",
               .caught_by = {"capability:CAP_SYS_MODULE"},
               .not_applicable = applicable(),
               .edit_values = add_capability("SYS_MODULE"),
               .judge = kJudgeNode});
  w.push_back({.name = "cap_dac_read_search_kept",
               .what = "CAP_DAC_READ_SEARCH kept (drop ALL, add DAC_READ_SEARCH)",
               .caught_by = {"capability:CAP_DAC_READ_SEARCH"},
               .not_applicable = applicable(),
               .edit_values = add_capability("DAC_READ_SEARCH"),
               .judge = kJudgeNode});
  w.push_back({.name = "cap_bpf_kept",
               .what = "CAP_BPF kept (drop ALL, add BPF)",
               .caught_by = {"capability:CAP_BPF", "bpf"},
               .not_applicable = not_under_gvisor(kRunscRefuses),
               .edit_values = add_capability("BPF"),
               .judge = kJudgeNode});
  w.push_back({.name = "every_capability_kept",
               .what = "every capability (add ALL): a privileged container's capabilities",
               .caught_by = {"capability:CAP_SYS_ADMIN", "capabilities", "capability_bounding"},
               .not_applicable = every_capability_applicability,
               .edit_values = add_capability("ALL"),
               .judge = kJudgeNode});
}

}  // namespace

// long-function: table. One designated initializer per weakening.
void append_escape_weakenings(std::vector<Weakening>& w) {
  append_capabilities(w);
  w.push_back({.name = "host_path_read_only",
               .what = "a host directory mounted read-only (hostPath volume, readOnly)",
               .caught_by = {"host_path_mount"},
               .not_applicable = applicable(),
               .edit_values = mount_host_path(true),
               .judge = kJudgeNode});
  w.push_back({.name = "host_path_writable",
               .what = "a host directory mounted writable (hostPath volume)",
               .caught_by = {"host_path_mount"},
               .not_applicable = applicable(),
               .edit_values = mount_host_path(false),
               .judge = kJudgeNode});
  w.push_back({.name = "service_account_token_mounted",
               .what = "a service-account token mounted (automountServiceAccountToken: true)",
               .caught_by = {"kubernetes_credentials"},
               .not_applicable = applicable(),
               .edit_item_values = [](json& values) { values["automountServiceAccountToken"] = true; },
               .judge = kJudgeNode});
  w.push_back({.name = "proc_sys_writable",
               .what = "/proc unmasked (procMount: Unmasked): /proc/sys on a writable mount",
               .caught_by = {"proc_sys"},
               .not_applicable = not_under_gvisor(
                   "gVisor's /proc/sys is the sentry's own and lies on a writable /proc in every gVisor "
                   "sandbox, clean ones included (observed): a write never reaches the host kernel's "
                   "sysctls, so verify reads it as emulated"),
               .edit_values = [](json& s) { s["securityContext"]["procMount"] = "Unmasked"; },
               .judge = kJudgeNode});
  w.push_back({.name = "cgroup_writable",
               .what = "the cgroup filesystem mounted writable (a privileged container's cgroups)",
               .caught_by = {"cgroup_mounts"},
               .not_applicable = not_under_gvisor(
                   "runsc mounts no cgroup filesystem into the sandbox here, writable spec or not "
                   "(observed: no cgroup mount in mountinfo): there is no release_agent to reach"),
               .backend = {"oci:cgroup-rw"},
               .judge = kJudgeNode});
}

}  // namespace isoharness::selftest
