#include "harness/deploy/local/oci_spec.h"

#include <algorithm>

#include "harness/common/error.h"

namespace isoharness::deploy::local {
namespace {

using nlohmann::json;

json mount(const std::string& dest, const std::string& type, const std::string& source,
           std::vector<std::string> options) {
  return json{{"destination", dest}, {"type", type}, {"source", source}, {"options", options}};
}

}  // namespace

const std::vector<std::string>& containerd_masked_paths() {
  static const std::vector<std::string> p = {
      "/proc/acpi",
      "/proc/asound",
      "/proc/kcore",
      "/proc/keys",
      "/proc/latency_stats",
      "/proc/timer_list",
      "/proc/timer_stats",
      "/proc/sched_debug",
      "/proc/scsi",
      "/sys/firmware",
      "/sys/devices/virtual/powercap",
  };
  return p;
}

const std::vector<std::string>& containerd_readonly_paths() {
  static const std::vector<std::string> p = {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                                             "/proc/sysrq-trigger"};
  return p;
}

namespace {

// The container's mounts: the kernel filesystems, the host's /usr (and alternatives)
// read-only, the bundle's read-only binds, and each emptyDir scratch as a tmpfs.
json oci_mounts(const SandboxSpec& spec, const BundleInputs& in) {
  json mounts = json::array({
      mount("/proc", "proc", "proc", {"nosuid", "noexec", "nodev"}),
      mount("/dev", "tmpfs", "tmpfs", {"nosuid", "strictatime", "mode=755", "size=65536k"}),
      mount("/dev/pts", "devpts", "devpts",
            {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}),
      mount("/dev/shm", "tmpfs", "shm", {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}),
      mount("/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev"}),
      mount("/sys", "sysfs", "sysfs", {"nosuid", "noexec", "nodev", "ro"}),
      mount("/sys/fs/cgroup", "cgroup", "cgroup", {"nosuid", "noexec", "nodev", "relatime", "ro"}),
      mount("/usr", "bind", in.host_usr, {"rbind", "ro", "nosuid", "nodev"}),
  });
  // Bound like /usr, not copied: its ~500 symlinks made every sandbox's image cost ext4 a
  // slow inode search each, the largest CPU cost of a local run (perf, 2026-12-01).
  if (!in.host_alternatives.empty())
    mounts.push_back(
        mount("/etc/alternatives", "bind", in.host_alternatives, {"rbind", "ro", "nosuid", "nodev"}));
  for (const auto& [source, dest] : in.ro_binds)
    mounts.push_back(mount(dest, "bind", source, {"rbind", "ro", "nosuid", "nodev"}));
  if (in.host_path_sources.size() != spec.host_paths.size())
    throw InfraError("control hostPath: " + std::to_string(spec.host_paths.size()) + " host paths but " +
                     std::to_string(in.host_path_sources.size()) +
                     " bound by descriptor; a path is never handed to the runtime as it is");
  for (std::size_t i = 0; i < spec.host_paths.size(); ++i) {
    const auto& h = spec.host_paths[i];
    mounts.push_back(mount(h.path, "bind", in.host_path_sources[i],
                           {"rbind", h.read_only ? "ro" : "rw", "nosuid", "nodev"}));
  }
  if (!in.service_account_dir.empty())
    mounts.push_back(mount(kServiceAccountPath, "bind", in.service_account_dir,
                           {"rbind", "ro", "nosuid", "nodev", "noexec"}));
  for (const auto& s : spec.scratch) {
    // emptyDir scratch: a tmpfs the sandbox's user owns (home) or everyone may use (/tmp).
    std::vector<std::string> opts = {"nosuid", "nodev", "size=1048576k"};
    if (s.path == "/tmp" || s.path == "/var/tmp") {
      opts.push_back("mode=1777");
    } else {
      opts.push_back("mode=0755");
      opts.push_back("uid=" + std::to_string(spec.uid));
      opts.push_back("gid=" + std::to_string(spec.gid));
    }
    mounts.push_back(mount(s.path, "tmpfs", "tmpfs", opts));
  }
  return mounts;
}

// The container's environment: the local image's own, then the service's env (a name the
// service sets replaces the image's, as a container's env does).
json oci_process_env(const ServiceSettings& settings) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"PATH", "/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin"},
      {"HOME", "/home/agent"},
      {"USER", "agent"},
      {"LANG", "C.UTF-8"}};
  for (const auto& [name, value] : settings.env) {
    auto same =
        std::find_if(env.begin(), env.end(), [&name = name](const auto& e) { return e.first == name; });
    if (same != env.end())
      same->second = value;
    else
      env.push_back({name, value});
  }
  json out = json::array();
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

// resources.limits as kubelet sets them: memory -> the memory limit, cpu -> a CFS quota per
// 100 ms period; requests.cpu -> the CPU shares (1024 per core, at least 2).
void oci_resource_limits(const ServiceSettings& settings, json& resources) {
  if (settings.memory_limit_bytes) resources["memory"] = {{"limit", *settings.memory_limit_bytes}};
  if (settings.cpu_limit_millis) {
    resources["cpu"]["period"] = 100000;
    resources["cpu"]["quota"] = std::max<std::int64_t>(1000, *settings.cpu_limit_millis * 100);
  }
  if (settings.cpu_request_millis)
    resources["cpu"]["shares"] = std::max<std::int64_t>(2, *settings.cpu_request_millis * 1024 / 1000);
}

}  // namespace

json make_oci_config(const SandboxSpec& spec, const BundleInputs& in) {
  ISOHARNESS_CHECK(!in.args.empty());
  const json caps = spec.capabilities;
  json process = {
      {"terminal", false},
      {"user", {{"uid", spec.uid}, {"gid", spec.gid}}},
      {"args", in.args},
      {"env", oci_process_env(spec.settings)},
      {"cwd", spec.settings.working_dir.empty() ? std::string("/") : spec.settings.working_dir},
      // The sandbox's processes run as a non-root user (sshd and its sessions), so the kept
      // set is also inheritable and ambient: that is how a session started by sshd holds
      // exactly the set the runtime grants, as a root container process would.
      {"capabilities",
       {{"bounding", caps},
        {"effective", caps},
        {"permitted", caps},
        {"inheritable", caps},
        {"ambient", caps}}},
      {"noNewPrivileges", spec.no_new_privileges},
  };

  const json mounts = oci_mounts(spec, in);

  json namespaces =
      json::array({{{"type", "pid"}}, {{"type", "ipc"}}, {{"type", "uts"}}, {{"type", "mount"}}});
  if (in.runtime == OciRuntime::runc) namespaces.push_back({{"type", "network"}, {"path", in.netns_path}});

  json resources = {{"devices", json::array({{{"allow", false}, {"access", "rwm"}}})},
                    {"pids", {{"limit", 4096}}}};
  if (!in.cpuset.empty()) resources["cpu"] = {{"cpus", in.cpuset}};
  oci_resource_limits(spec.settings, resources);

  json linux_ = {
      {"namespaces", namespaces},
      // procMount: Unmasked drops both lists, as containerd does for that proc mount type.
      {"maskedPaths", spec.proc_unmasked ? std::vector<std::string>() : containerd_masked_paths()},
      {"readonlyPaths", spec.proc_unmasked ? std::vector<std::string>() : containerd_readonly_paths()},
      {"resources", resources},
      {"cgroupsPath", in.cgroups_path},
  };
  if (!in.seccomp.is_null()) linux_["seccomp"] = in.seccomp;

  return json{
      {"ociVersion", "1.0.2"},
      {"process", process},
      {"root", {{"path", "rootfs"}, {"readonly", spec.read_only_root}}},
      {"hostname", in.hostname},
      {"mounts", mounts},
      {"linux", linux_},
  };
}

}  // namespace isoharness::deploy::local
