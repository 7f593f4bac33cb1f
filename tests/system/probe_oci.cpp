#include "tests/system/probe_oci.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>

namespace isoharness::probe_test {

namespace fs = std::filesystem;

std::string runtime_name(Runtime r) {
  return r == Runtime::runc ? "runc" : "runsc";
}

std::string host_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

namespace {

std::string random_hex(int n) {
  std::random_device rd;
  std::mt19937 gen(rd());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < n; ++i) s.push_back(kHex[gen() % 16]);
  return s;
}

nlohmann::json mount(const std::string& dest, const std::string& type, const std::string& source,
                     std::vector<std::string> options) {
  return {{"destination", dest}, {"type", type}, {"source", source}, {"options", options}};
}

// Deny what a RuntimeDefault profile denies to a process without CAP_SYS_ADMIN, as far as
// these probes can tell: namespaces, mounts, kernel modules, and the like.
nlohmann::json seccomp_profile() {
  nlohmann::json denied = {
      "unshare",     "setns",        "mount",         "umount2",           "pivot_root", "keyctl",
      "add_key",     "request_key",  "bpf",           "perf_event_open",   "kexec_load", "kexec_file_load",
      "init_module", "finit_module", "delete_module", "open_by_handle_at", "swapon",     "swapoff",
      "reboot",      "fsopen",       "fsmount",       "move_mount",        "open_tree"};
  return {{"defaultAction", "SCMP_ACT_ALLOW"},
          {"architectures", {"SCMP_ARCH_X86_64"}},
          {"syscalls",
           {{{"names", denied}, {"action", "SCMP_ACT_ERRNO"}, {"errnoRet", 1}},
            {{"names", {"clone"}},
             {"action", "SCMP_ACT_ERRNO"},
             {"errnoRet", 1},
             {"args",
              {{{"index", 0},
                {"value", 0x10000000},
                {"valueTwo", 0x10000000},
                {"op", "SCMP_CMP_MASKED_EQ"}}}}}}}};
}

}  // namespace

ProbeBundle::ProbeBundle(const std::string& bundle_dir) {
  run_id_ = random_hex(6);
  dir_ = "/tmp/ih-" + run_id_ + "-probe";
  fs::create_directories(dir_);
  fs::path rootfs = fs::path(dir_) / "rootfs";
  for (const char* d : {"proc", "dev", "sys", "tmp", "isoprobe"}) fs::create_directories(rootfs / d);
  fs::copy(bundle_dir, rootfs / "isoprobe",
           fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  if (!fs::exists(rootfs / "isoprobe" / "isoprobe") ||
      !fs::exists(rootfs / "isoprobe" / "lib" / "isoprobe.bin"))
    throw std::runtime_error("isoprobe bundle incomplete in " + bundle_dir +
                             " (build target isoprobe_bundle)");
  fs::create_directories(fs::path(dir_) / "state-runc");
  fs::create_directories(fs::path(dir_) / "state-runsc");
}

ProbeBundle::~ProbeBundle() {
  for (const auto& [runtime, id] : containers_) {
    std::string root = dir_ + "/state-" + runtime_name(runtime);
    std::vector<std::string> argv =
        runtime == Runtime::runc ? std::vector<std::string>{"runc", "--root", root, "delete", "--force", id}
                                 : std::vector<std::string>{"runsc", "--root", root, "delete", "-force", id};
    RunOptions o;
    o.deadline = std::chrono::seconds(30);
    (void)run_command(argv, o);
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string ProbeBundle::write_config(const ContainerSpec& spec, const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"/isoprobe/isoprobe"};
  argv.insert(argv.end(), args.begin(), args.end());
  nlohmann::json caps = nlohmann::json::array();
  if (!spec.drop_capabilities)
    caps = {"CAP_CHOWN",   "CAP_DAC_OVERRIDE", "CAP_FSETID",           "CAP_FOWNER",
            "CAP_MKNOD",   "CAP_NET_RAW",      "CAP_SETGID",           "CAP_SETUID",
            "CAP_SETFCAP", "CAP_SETPCAP",      "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT",
            "CAP_KILL",    "CAP_AUDIT_WRITE"};
  nlohmann::json process = {{"terminal", false},
                            {"user", {{"uid", 0}, {"gid", 0}}},
                            {"args", argv},
                            {"env", {"PATH=/isoprobe", "HOME=/tmp"}},
                            {"cwd", "/"},
                            {"capabilities",
                             {{"bounding", caps},
                              {"effective", caps},
                              {"permitted", caps},
                              {"inheritable", nlohmann::json::array()},
                              {"ambient", nlohmann::json::array()}}},
                            {"rlimits", {{{"type", "RLIMIT_NOFILE"}, {"hard", 1024}, {"soft", 1024}}}},
                            {"noNewPrivileges", spec.no_new_privileges}};
  nlohmann::json mounts = {
      mount("/proc", "proc", "proc", {}),
      mount("/dev", "tmpfs", "tmpfs", {"nosuid", "strictatime", "mode=755", "size=65536k"}),
      mount("/dev/pts", "devpts", "devpts",
            {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}),
      mount("/dev/shm", "tmpfs", "shm", {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}),
      mount("/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev"}),
      mount("/sys", "sysfs", "sysfs", {"nosuid", "noexec", "nodev", "ro"}),
      mount("/sys/fs/cgroup", "cgroup", "cgroup", {"nosuid", "noexec", "nodev", "relatime", "ro"}),
      mount("/tmp", "tmpfs", "tmpfs", {"nosuid", "nodev", "mode=1777", "size=16m"}),
  };
  nlohmann::json linux_section = {
      {"namespaces",
       {{{"type", "pid"}}, {{"type", "network"}}, {{"type", "ipc"}}, {{"type", "uts"}}, {{"type", "mount"}}}},
      {"maskedPaths",
       {"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
        "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi"}},
      {"readonlyPaths", {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}}};
  if (spec.seccomp_filter) linux_section["seccomp"] = seccomp_profile();
  nlohmann::json config = {{"ociVersion", "1.0.2"},
                           {"process", process},
                           {"root", {{"path", "rootfs"}, {"readonly", spec.read_only_root}}},
                           {"hostname", "ih-" + run_id_},
                           {"mounts", mounts},
                           {"linux", linux_section}};
  std::string path = dir_ + "/config.json";
  std::ofstream(path) << config.dump(2);
  return path;
}

Expected<ContainerRun> ProbeBundle::run(Runtime runtime, const ContainerSpec& spec,
                                        const std::vector<std::string>& args,
                                        std::chrono::milliseconds deadline) {
  write_config(spec, args);
  std::string id = "ih-" + run_id_ + "-probe-" + std::to_string(++counter_);
  std::string root = dir_ + "/state-" + runtime_name(runtime);
  std::vector<std::string> argv;
  if (runtime == Runtime::runc) {
    argv = {"runc", "--root", root, "run", "--bundle", dir_, id};
  } else {
    argv = {"runsc", "--root", root, "--platform=ptrace", "--network=none", "run", "--bundle", dir_, id};
  }
  containers_.emplace_back(runtime, id);
  RunOptions o;
  o.deadline = deadline;
  o.max_output = 4 << 20;
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_command(argv, o);
  if (!r) return r.error();
  ContainerRun out;
  out.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  out.result = std::move(r.value());
  return out;
}

}  // namespace isoharness::probe_test
