// Checks of the escape classes the published benchmarks exploit (SandboxEscapeBench,
// SandboxBench; the table in docs/SECURITY.md): a mount of the node's storage beyond what
// the plan expects, /proc/sys on a writable mount (sysctl injection, core_pattern), a
// cgroup mount a root process could write (release_agent), bpf(2) reachable (eBPF
// verifier bugs), and the runtime's version against the fixed versions of runc's escapes.
// Every failing reason names the class, so a report reader knows which escape it opens.
#include <fmt/format.h>

#include <algorithm>

#include "harness/verify/checks_internal.h"

namespace isoharness::verify::detail {

namespace {

std::vector<std::string> planned_strings(const nlohmann::json* v) {
  std::vector<std::string> out;
  if (v && v->is_array())
    for (const auto& s : *v)
      if (s.is_string()) out.push_back(s.get<std::string>());
  return out;
}

void check_host_path_mounts(const VerifyInput& in, const nlohmann::json* obs, std::vector<CheckResult>& out) {
  const auto* allowed_json = planned(in, "host_mounts_allowed");
  if (!allowed_json || !allowed_json->is_array()) {
    out.push_back(unplanned("host_path_mount", "host_mounts_allowed"));
    return;
  }
  if (!obs || !obs->contains("host_mounts") || !(*obs)["host_mounts"].is_array()) {
    out.push_back(missing("host_path_mount", in.posture, "escape_mounts", "no host path beyond the plan"));
    return;
  }
  const auto allowed = planned_strings(allowed_json);
  std::vector<std::string> extra;
  for (const auto& m : (*obs)["host_mounts"]) {
    const auto point = get_string(&m, "mount_point");
    if (!point || std::find(allowed.begin(), allowed.end(), *point) != allowed.end()) continue;
    extra.push_back(*point + " (" + get_string(&m, "fstype").value_or("?") +
                    (get_bool(&m, "read_only").value_or(false) ? ", read-only" : ", writable") + ")");
  }
  const std::string seen = extra.empty() ? "none beyond the plan" : fmt::format("{}", fmt::join(extra, "; "));
  out.push_back(make("host_path_mount", extra.empty(), "no mount of the node's storage beyond the plan", seen,
                     extra.empty()
                         ? "no host path mounted beyond the plan"
                         : "host_path_mount: the node's filesystem is mounted in the sandbox (escape "
                           "class: host path mount): " +
                               seen,
                     observation_evidence(in.posture, "escape_mounts")));
}

// An open state under an observed gVisor is the sentry's own ("emulated").
std::optional<std::string> open_state(std::optional<bool> open, const char* open_name,
                                      const char* closed_name, bool gvisor) {
  if (!open) return std::nullopt;
  return !*open ? closed_name : (gvisor ? "emulated" : open_name);
}

void check_mount_interfaces(const VerifyInput& in, const nlohmann::json* obs, std::vector<CheckResult>& out) {
  const bool gvisor = observed_gvisor(in.posture);
  std::optional<bool> proc_sys_open;
  if (auto ro = get_bool(obs, "proc_sys_read_only")) proc_sys_open = !*ro;
  judge_interface(in,
                  {"proc_sys", "escape_mounts", open_state(proc_sys_open, "writable", "read_only", gvisor),
                   proc_sys_open.value_or(false)
                       ? "/proc/sys on a writable mount (escape class: sysctl injection, core_pattern)"
                       : "/proc/sys on a read-only mount"},
                  out);
  std::optional<bool> cgroup_open;
  std::vector<std::string> rw;
  if (obs && obs->contains("cgroup_writable_mounts")) {
    rw = get_strings(obs, "cgroup_writable_mounts");
    cgroup_open = !rw.empty();
  }
  const bool agent = get_bool(obs, "release_agent_visible").value_or(false);
  judge_interface(in,
                  {"cgroup_mounts", "escape_mounts", open_state(cgroup_open, "writable", "read_only", gvisor),
                   cgroup_open.value_or(false)
                       ? fmt::format("writable cgroup mounts {} (escape class: cgroup release_agent{})",
                                     fmt::join(rw, ", "), agent ? ", release_agent visible" : "")
                       : "cgroup mounts read-only"},
                  out);
}

void check_bpf(const VerifyInput& in, std::vector<CheckResult>& out) {
  const auto* obs = observation(in.posture, "bpf");
  const auto created = get_bool(obs, "map_created");
  const long long disabled = get_int(obs, "unprivileged_bpf_disabled").value_or(-1);
  judge_interface(
      in,
      {"bpf", "bpf", open_state(created, "allowed", "refused", observed_gvisor(in.posture)),
       created.value_or(false) ? fmt::format("bpf(2) created a map (escape class: eBPF verifier bugs; "
                                             "unprivileged_bpf_disabled {})",
                                             disabled)
                               : fmt::format("bpf(2) refused (unprivileged_bpf_disabled {})", disabled)},
      out);
}

}  // namespace

void check_escape_classes(const VerifyInput& in, std::vector<CheckResult>& out) {
  const auto* obs = observation(in.posture, "escape_mounts");
  check_host_path_mounts(in, obs, out);
  check_mount_interfaces(in, obs, out);
  check_bpf(in, out);
}

std::string capability_escape_class(const std::string& name) {
  static const std::pair<const char*, const char*> kClasses[] = {
      {"CAP_SYS_ADMIN", "mount, cgroup release_agent, most kernel interfaces"},
      {"CAP_SYS_MODULE", "loads kernel modules into the host kernel"},
      {"CAP_DAC_READ_SEARCH", "open_by_handle_at reads host files (shocker)"},
      {"CAP_SYS_PTRACE", "attaches to other processes"},
      {"CAP_SYS_RAWIO", "raw I/O ports and /dev/mem"},
      {"CAP_NET_ADMIN", "rewrites the network namespace's routes and filters"},
      {"CAP_BPF", "loads eBPF programs (verifier bugs)"},
      {"CAP_PERFMON", "perf and eBPF tracing of the kernel"},
  };
  for (const auto& [cap, what] : kClasses)
    if (name == cap) return std::string(" (escape class: dangerous capabilities; ") + what + ")";
  return "";
}

}  // namespace isoharness::verify::detail
