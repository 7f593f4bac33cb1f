// `isoharness local doctor`: every prerequisite of the local backend, checked for real on
// this machine (a scratch namespace with a veth and an nft table, the seccomp profile
// converted), each with the exact step that fixes it.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "harness/common/install_paths.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/local_backend.h"
#include "harness/deploy/local/seccomp_profile.h"

namespace isoharness::deploy::local {
namespace fs = std::filesystem;

namespace {

DoctorCheck program_check(const std::string& program, const std::string& package, const std::string& why) {
  std::string path =
      program[0] == '/' ? (::access(program.c_str(), X_OK) == 0 ? program : "") : find_program(program);
  return DoctorCheck{program + " (" + why + ")", !path.empty(), path.empty() ? "not found" : path,
                     "apt-get install " + package};
}

DoctorCheck scratch_namespace_check() {
  const std::string id = "d" + new_run_id().substr(0, 6);
  const std::string ns = netns_name(id, "doctor");
  DoctorCheck c{"network namespaces, veth pairs and nftables work", false, "", ""};
  c.how_to_fix =
      "run as root on a kernel with network namespaces, veth and nf_tables (modprobe veth nf_tables)";
  RunOptions opts;
  opts.deadline = 15s;
  auto step = [&](const std::vector<std::string>& argv, const std::string& what, const std::string& in = "") {
    RunOptions o = opts;
    if (!in.empty()) o.stdin_data = in;
    auto r = run_command(argv, o);
    if (!r || !r->ok()) {
      c.detail = what + " failed: " + (r ? r->describe() : r.error().message);
      return false;
    }
    return true;
  };
  bool ok =
      step({"ip", "netns", "add", ns}, "ip netns add") &&
      step({"ip", "-n", ns, "link", "add", "name", "ihd0", "type", "veth", "peer", "name", "ihd1"},
           "veth pair") &&
      step(
          in_netns(ns, {"nft", "-f", "-"}), "nft table",
          "table inet ih_doctor {\n chain f {\n  type filter hook forward priority 0; policy drop;\n }\n}\n");
  run_quietly({"ip", "netns", "delete", ns}, 10s);
  c.ok = ok;
  if (ok) c.detail = "created and removed " + ns;
  return c;
}

// Where the files isoharness ships are taken from, and from which source
// (harness/common/install_paths.h): an installed copy must show its own prefix here.
std::vector<DoctorCheck> shipped_path_checks(const LocalOptions& options) {
  std::vector<DoctorCheck> out;
  for (const auto& [item, found] : resolve_all_shipped_paths()) {
    std::string fix = std::string("install the isoharness package, or set ") + item->env_var;
    if (*item->flag) fix += std::string(" or pass ") + item->flag;
    DoctorCheck c{item->what, found.found(), found.describe(), fix};
    if (item == &kWorldHelper && !options.helper_path.empty()) {
      c = DoctorCheck{item->what, ::access(options.helper_path.c_str(), X_OK) == 0,
                      options.helper_path + " (options)", "give an executable isoharness-world-helper"};
    }
    out.push_back(std::move(c));
    if (item == &kIsoprobeBundle && found.found()) {
      const std::string loop = (fs::path(found.path).parent_path() / "getpid-static").string();
      out.push_back({"getpid-static (beside the isoprobe bundle)", ::access(loop.c_str(), X_OK) == 0, loop,
                     "build the target getpid_static, or install the isoharness package"});
    }
  }
  return out;
}

}  // namespace

std::vector<DoctorCheck> doctor(const LocalOptions& options) {
  std::vector<DoctorCheck> out;
  out.push_back({"running as root", ::geteuid() == 0,
                 ::geteuid() == 0 ? "uid 0" : "uid " + std::to_string(::geteuid()),
                 "run isoharness as root (sudo)"});
  out.push_back(program_check("ip", "iproute2", "namespaces, links, routes"));
  out.push_back(program_check("nsenter", "util-linux", "enter sandbox namespaces"));
  out.push_back(program_check("sysctl", "procps", "per-namespace settings"));
  out.push_back(program_check("nft", "nftables", "egress policy"));
  out.push_back(program_check("dnsmasq", "dnsmasq-base", "the world's resolver"));
  out.push_back(program_check("runc", "runc", "runtime for the default class"));
  out.push_back(program_check("runsc", "runsc", "gVisor runtime"));
  out.push_back(program_check("/usr/sbin/sshd", "openssh-server", "sshd in sandboxes and the jumphost"));
  out.push_back(program_check("ssh-keygen", "openssh-client", "host keys"));
  out.push_back(program_check("ssh", "openssh-client", "system tests and `local up`"));

  for (auto& c : shipped_path_checks(options)) out.push_back(std::move(c));

  auto seccomp = load_default_seccomp(options.seccomp_profile, SeccompTarget{});
  out.push_back(
      {"default seccomp profile converts to OCI", bool(seccomp),
       seccomp ? options.seccomp_profile + ": " + std::to_string((*seccomp)["syscalls"].size()) + " rules"
               : seccomp.error().message,
       "apt-get install golang-github-containers-common"});

  bool cpuset =
      fs::exists("/sys/fs/cgroup/cpuset/cpuset.cpus") ||
      read_file_bounded("/sys/fs/cgroup/cgroup.controllers", 4096).find("cpuset") != std::string::npos;
  out.push_back({"cgroup cpuset controller (node classes pin CPUs)", cpuset,
                 cpuset ? "available" : "no cpuset controller under /sys/fs/cgroup",
                 "boot with the cpuset cgroup controller enabled (cgroup v1 cpuset or v2 +cpuset)"});

  bool kvm = ::access("/dev/kvm", R_OK | W_OK) == 0;
  out.push_back({"runsc platform", true,
                 kvm ? "/dev/kvm present; isoharness still uses ptrace for comparable figures"
                     : "no /dev/kvm: runsc uses --platform=ptrace",
                 ""});

  std::error_code ec;
  fs::create_directories(options.state_root, ec);
  bool writable = !ec && ::access(options.state_root.c_str(), W_OK) == 0;
  out.push_back({"state directory is writable", writable, options.state_root,
                 "make " + options.state_root + " writable by root, or pass --state-dir"});

  if (::geteuid() == 0 && !find_program("ip").empty() && !find_program("nft").empty() &&
      !find_program("nsenter").empty())
    out.push_back(scratch_namespace_check());
  return out;
}

}  // namespace isoharness::deploy::local
