#include "tests/system/local_test_support.h"

#include <dirent.h>
#include <fmt/format.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "harness/common/ssh_keygen.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/host_path_bind.h"
#include "harness/deploy/local/local_backend.h"
#include "harness/deploy/local/ssh_client_files.h"

namespace isoharness::test::local {
namespace fs = std::filesystem;
namespace dl = deploy::local;

ScratchDir::ScratchDir() {
  char tmpl[] = "/tmp/ih-localtest-XXXXXX";
  char* d = ::mkdtemp(tmpl);
  if (!d) throw std::runtime_error("mkdtemp failed");
  path = d;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path, ec);
}

std::string make_login_key(const std::string& dir) {
  auto pub = generate_ed25519_key(dir + "/id_ed25519", "isoharness-test");
  if (!pub) throw std::runtime_error("test login key: " + pub.error().message);
  return *pub;
}

RunResult ssh_through_jumphost(const std::string& dir, const std::string& tag,
                               const transport::SshRoute& route, const std::vector<std::string>& command,
                               int deadline_s) {
  const std::string kh = dir + "/known_hosts-" + tag, cfg = dir + "/ssh_config-" + tag;
  dl::write_file(kh, dl::known_hosts_lines(route));
  dl::write_file(cfg, dl::ssh_client_config(kh, dir + "/id_ed25519"));
  RunOptions opts;
  opts.deadline = std::chrono::seconds(deadline_s);
  auto r = run_command(dl::ssh_argv(route, cfg, command), opts);
  if (!r) throw std::runtime_error("cannot run ssh: " + r.error().message);
  return *r;
}

std::string printf_escaped(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("\\x{:02x}", c);
  return out;
}

std::string answer_probe_function() {
  return "probe() { r=$(timeout 5 bash -c 'exec 3<>/dev/tcp/$0 2>/dev/null || exit 1; echo connected; "
         "printf \"$1\" >&3 2>/dev/null; "
         "if [ -z \"$2\" ]; then read -r -N 1 -t 4 c <&3 && echo answered marker; exit; fi; "
         "while IFS= read -r -t 4 l <&3 || [ -n \"$l\" ]; do echo \"answered $l\"; "
         "case $l in *\"$2\"*) echo marker; exit;; esac; l=; done' \"$1\" \"$2\" \"$3\"); "
         "case $r in *marker*) echo open;; *answered*) echo answered-otherwise; echo \"$r\" >&2;; "
         "connected) echo closed; echo \"$1: connected, no answer\" >&2;; *) echo closed;; esac; }; ";
}

std::vector<std::string> leftovers_of(const std::string& state_root, const std::string& run_id) {
  std::vector<std::string> out;
  const std::string prefix = "ih-" + run_id + "-";
  for (const auto& ns : dl::list_netns())
    if (ns.rfind(prefix, 0) == 0) out.push_back("netns " + ns);
  if (fs::exists("/sys/class/net/ih-" + run_id)) out.push_back("link ih-" + run_id);
  if (fs::exists(state_root + "/" + run_id)) out.push_back("directory " + state_root + "/" + run_id);
  for (const auto& m : dl::mount_points_under(state_root + "/" + run_id)) out.push_back("mount " + m);
  auto guard = run_command({"nft", "list", "table", "inet", "ih_" + run_id});
  if (guard && guard->ok()) out.push_back("host nftables table inet ih_" + run_id);
  // Any process whose command line names the run (containers' runtimes, helpers, dnsmasq).
  DIR* proc = ::opendir("/proc");
  while (proc) {
    dirent* e = ::readdir(proc);
    if (!e) break;
    std::string pid = e->d_name;
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmd = dl::read_file_bounded("/proc/" + pid + "/cmdline", 8192);
    for (auto& c : cmd)
      if (c == '\0') c = ' ';
    if (cmd.find(prefix) != std::string::npos ||
        cmd.find(state_root + "/" + run_id + "/") != std::string::npos ||
        cmd.find("ih-" + run_id + " ") != std::string::npos)
      out.push_back("process " + pid + ": " + cmd.substr(0, 200));
  }
  if (proc) ::closedir(proc);
  std::error_code ec;
  for (const auto& ctl : fs::directory_iterator("/sys/fs/cgroup", ec)) {
    std::error_code ec2;
    for (const auto& e : fs::directory_iterator(ctl.path(), ec2))
      if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back("cgroup " + e.path().string());
  }
  return out;
}

std::string helper_path() {
  return dl::default_helper_path();
}

}  // namespace isoharness::test::local
