#include "tests/system/transport_world.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "harness/common/ssh_keygen.h"
#include "harness/common/subprocess.h"

namespace isoharness::test {
namespace {

using namespace std::chrono_literals;

RunResult run_ok(const std::vector<std::string>& argv) {
  auto r = run_command(argv, RunOptions{.deadline = 20s, .max_output = 1 << 20});
  if (!r) throw std::runtime_error(render_argv(argv) + ": " + r.error().message);
  if (!r->ok()) throw std::runtime_error(render_argv(argv) + ": " + r->describe());
  return *r;
}

void write_file(const std::string& path, const std::string& text, mode_t mode = 0600) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path);
  ::chmod(path.c_str(), mode);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "type base64" of an OpenSSH .pub file (the comment dropped).
std::string key_line(const std::string& pub_path) {
  std::istringstream in(read_all(pub_path));
  std::string type, b64;
  in >> type >> b64;
  if (type.empty() || b64.empty()) throw std::runtime_error("no key in " + pub_path);
  return type + " " + b64;
}

// Every IPv4 address or prefix the host's root namespace mentions in addresses and routes.
std::set<std::string> host_ipv4_tokens() {
  std::set<std::string> tokens;
  for (const auto& argv : {std::vector<std::string>{"ip", "-o", "-4", "addr", "show"},
                           std::vector<std::string>{"ip", "-4", "route", "show", "table", "all"}}) {
    std::istringstream in(run_ok(argv).out);
    std::string word;
    while (in >> word) tokens.insert(word);
  }
  return tokens;
}

// Picks the base of a free /30 in 198.51.100.0/24, avoiding `taken` and whatever the host
// uses. Refuses the range when the host routes a wider prefix of it.
int free_slot(const std::set<std::string>& tokens, std::set<int>& taken, std::mt19937& rng) {
  for (const auto& t : tokens) {
    if (t.rfind("198.51.100.", 0) == 0 && t.find('/') != std::string::npos) {
      int len = std::stoi(t.substr(t.find('/') + 1));
      if (len < 30)
        throw std::runtime_error("198.51.100.0/24 is routed on this host (" + t + "): not using it");
    }
  }
  std::uniform_int_distribution<int> pick(1, 62);
  for (int attempt = 0; attempt < 200; ++attempt) {
    int base = pick(rng) * 4;
    if (taken.count(base)) continue;
    bool used = false;
    for (int i = 0; i < 4 && !used; ++i) {
      std::string a = fmt::format("198.51.100.{}", base + i);
      used = tokens.count(a) || tokens.count(a + "/30") || tokens.count(a + "/32");
    }
    if (!used) {
      taken.insert(base);
      return base;
    }
  }
  throw std::runtime_error("no free /30 in 198.51.100.0/24");
}

void wait_for_listening(const std::string& log, const std::string& what) {
  for (int i = 0; i < 100; ++i) {
    if (read_all(log).find("Server listening on") != std::string::npos) return;
    std::this_thread::sleep_for(50ms);
  }
  throw std::runtime_error(what + " did not start listening; its log says: " + read_all(log));
}

}  // namespace

std::unique_ptr<TransportWorld> TransportWorld::create(Options options) {
  std::unique_ptr<TransportWorld> world(new TransportWorld());
  world->options_ = options;
  world->build();  // on a throw, the unique_ptr's destructor tears down what exists
  return world;
}

void TransportWorld::build() {
  std::random_device seed;
  std::mt19937 rng(seed());
  run_id = fmt::format("{:06x}", rng() & 0xffffff);
  char tmpl[] = "/tmp/ih-transport-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir = tmpl;
  std::filesystem::create_directories(dir + "/remote");
  make_keys();

  std::set<int> taken;
  auto tokens = host_ipv4_tokens();
  const int outer = free_slot(tokens, taken, rng);
  const int inner = free_slot(tokens, taken, rng);
  const Addresses a{fmt::format("198.51.100.{}", outer + 1), fmt::format("198.51.100.{}", outer + 2),
                    fmt::format("198.51.100.{}", inner + 1), fmt::format("198.51.100.{}", inner + 2)};
  link_namespaces(a);

  // The jumphost as a platform runs it: no shell, forwarding only to the sandbox's sshd.
  jump_role_ = fmt::format("PermitTTY no\n{}\nAllowTcpForwarding local\nPermitOpen {}:2222\n",
                           options_.jump_sftp ? "Subsystem sftp internal-sftp\nForceCommand internal-sftp"
                                              : "ForceCommand /bin/false",
                           a.sandbox);
  jump_sshd_ = start_sshd(ns_jump, a.jump, 22, dir + "/jump_host");
  start_sshd(ns_sandbox, a.sandbox, 2222, dir + "/sandbox_host");

  route.jump = transport::SshEndpoint{a.jump, 22, "root", key_line(dir + "/jump_host.pub")};
  route.sandbox = transport::SshEndpoint{a.sandbox, 2222, "root", key_line(dir + "/sandbox_host.pub")};

  write_file(dir + "/openssh_known_hosts", fmt::format("{} {}\n[{}]:2222 {}\n", a.jump, route.jump.host_key,
                                                       a.sandbox, route.sandbox.host_key));
  openssh_config = dir + "/openssh_config";
  write_file(openssh_config, fmt::format("Host *\n  User root\n  IdentityFile {0}/id\n  IdentitiesOnly yes\n"
                                         "  UserKnownHostsFile {0}/openssh_known_hosts\n"
                                         "  StrictHostKeyChecking yes\n  BatchMode yes\n  ConnectTimeout 10\n"
                                         "  LogLevel ERROR\n",
                                         dir));
}

// Keys: the client's, one host key per server, and a stranger's; the client's authorized.
void TransportWorld::make_keys() {
  for (auto [name, comment] : {std::pair{"id", "client"},
                               {"jump_host", "jump"},
                               {"sandbox_host", "sandbox"},
                               {"stranger", "stranger"}}) {
    auto key = generate_ed25519_key(dir + "/" + name, comment);
    if (!key) throw std::runtime_error(key.error().message);
  }
  credentials.private_key_path = dir + "/id";
  credentials.public_key_path = dir + "/id.pub";
  client_public_key = key_line(dir + "/id.pub");
  stranger_key = key_line(dir + "/stranger.pub");
  write_file(dir + "/authorized_keys", client_public_key + "\n");

  // sshd refuses to start without its privilege-separation directory, which Debian makes
  // at boot; a container may lack it. Created if missing and left in place (it is the
  // system's, not ours, and other sshd instances may be using it by then).
  std::filesystem::create_directories("/run/sshd");
  ::chmod("/run/sshd", 0755);
}

// host <-> jumphost namespace <-> sandbox namespace, two veth pairs on two /30s.
void TransportWorld::link_namespaces(const Addresses& a) {
  ns_jump = "ih-" + run_id + "-tjump";
  ns_sandbox = "ih-" + run_id + "-tsbx";
  // "ih-…": a live local-backend world's host guard (nft_rules.cc, host_guard_ruleset)
  // drops host traffic to 198.51.100.0/24 except through interfaces named ih-*; a test
  // world beside one must match that pattern or its jumphost cannot be reached.
  veth_host_ = "ih-" + run_id + "h";
  const std::string& veth_host = veth_host_;
  std::string veth_jump = "ih" + run_id + "j";
  std::string veth_ja = "ih" + run_id + "a", veth_sb = "ih" + run_id + "b";
  for (const auto& ns : {ns_jump, ns_sandbox}) {
    run_ok({"ip", "netns", "add", ns});
    namespaces_.push_back(ns);
    run_ok({"ip", "-n", ns, "link", "set", "lo", "up"});
  }
  run_ok({"ip", "link", "add", veth_host, "type", "veth", "peer", "name", veth_jump, "netns", ns_jump});
  run_ok({"ip", "addr", "add", a.host + "/30", "dev", veth_host});
  run_ok({"ip", "link", "set", veth_host, "up"});
  run_ok({"ip", "-n", ns_jump, "addr", "add", a.jump + "/30", "dev", veth_jump});
  run_ok({"ip", "-n", ns_jump, "link", "set", veth_jump, "up"});
  run_ok({"ip", "-n", ns_jump, "link", "add", veth_ja, "type", "veth", "peer", "name", veth_sb, "netns",
          ns_sandbox});
  run_ok({"ip", "-n", ns_jump, "addr", "add", a.jump_inner + "/30", "dev", veth_ja});
  run_ok({"ip", "-n", ns_jump, "link", "set", veth_ja, "up"});
  run_ok({"ip", "-n", ns_sandbox, "addr", "add", a.sandbox + "/30", "dev", veth_sb});
  run_ok({"ip", "-n", ns_sandbox, "link", "set", veth_sb, "up"});
}

// The sandbox's sshd_config lines: its SFTP subsystem, and sessions whose PATH has no
// `head`: a directory of links to every other command of /usr/bin and /usr/sbin. sshd's
// SetEnv is applied after its own PATH and HOME, so it replaces them in every session; HOME
// is an empty directory so that root's own rc files (which may call head) stay out of it.
std::string TransportWorld::sandbox_role() const {
  namespace fs = std::filesystem;
  std::string role = options_.sftp ? "Subsystem sftp internal-sftp\n" : "";
  if (options_.head) return role;
  const std::string bin = dir + "/sandbox-bin";
  fs::create_directories(bin);
  fs::create_directories(dir + "/sandbox-home");
  for (const char* from : {"/usr/bin", "/usr/sbin"})
    for (const auto& entry : fs::directory_iterator(from)) {
      const auto name = entry.path().filename();
      std::error_code ec;
      if (name != "head" && !fs::exists(bin / name, ec)) fs::create_symlink(entry.path(), bin / name);
    }
  return role + "SetEnv PATH=" + bin + " HOME=" + dir + "/sandbox-home\n";
}

pid_t TransportWorld::start_sshd(const std::string& ns, const std::string& address, int port,
                                 const std::string& host_key) {
  std::string config = fmt::format("{}/sshd_{}.conf", dir, port);
  std::string role = port == 22 ? jump_role_ : sandbox_role();
  write_file(config,
             fmt::format("Port {}\nListenAddress {}\nHostKey {}\nAuthorizedKeysFile {}/authorized_keys\n"
                         "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
                         "PidFile none\nStrictModes no\nPermitRootLogin prohibit-password\n"
                         "MaxSessions 64\nMaxStartups 200:30:400\nLogLevel INFO\n{}",
                         port, address, host_key, dir, role));
  std::string log = fmt::format("{}/sshd_{}.log", dir, port);
  auto pid = spawn_detached({"ip", "netns", "exec", ns, "/usr/sbin/sshd", "-D", "-e", "-f", config}, log);
  if (!pid) throw std::runtime_error("cannot start sshd: " + pid.error().message);
  pids_.push_back(*pid);
  wait_for_listening(log, fmt::format("sshd in {} on port {}", ns, port));
  return *pid;
}

std::string TransportWorld::start_agent() {
  std::string sock = dir + "/agent.sock";
  auto pid = spawn_detached({"ssh-agent", "-D", "-a", sock}, dir + "/agent.log");
  if (!pid) throw std::runtime_error("cannot start ssh-agent: " + pid.error().message);
  pids_.push_back(*pid);
  for (int i = 0; i < 100 && ::access(sock.c_str(), F_OK) != 0; ++i) std::this_thread::sleep_for(20ms);
  auto r = run_command({"ssh-add", dir + "/id"},
                       RunOptions{.deadline = 10s, .env_set = {{"SSH_AUTH_SOCK", sock}}});
  if (!r || !r->ok()) throw std::runtime_error("ssh-add failed: " + (r ? r->describe() : r.error().message));
  return sock;
}

void TransportWorld::set_jump_stalled(bool stalled) {
  std::string table = "ih" + run_id + "stall";
  if (!stalled) {
    run_ok({"ip", "netns", "exec", ns_jump, "nft", "delete", "table", "inet", table});
    return;
  }
  run_ok({"ip", "netns", "exec", ns_jump, "nft", "add", "table", "inet", table});
  run_ok({"ip",   "netns",  "exec", ns_jump, "nft",      "add", "chain", "inet",   table,  "input", "{",
          "type", "filter", "hook", "input", "priority", "0",   ";",     "policy", "drop", ";",     "}"});
}

void TransportWorld::kill_jump_connections() {
  std::istringstream in(run_ok({"ip", "netns", "pids", ns_jump}).out);
  pid_t pid = 0;
  while (in >> pid) {
    if (pid != jump_sshd_ && pid > 1) ::kill(pid, SIGKILL);
  }
}

std::vector<std::string> TransportWorld::openssh_argv(const std::vector<std::string>& command) const {
  std::vector<std::string> argv = {"ssh",
                                   "-F",
                                   openssh_config,
                                   "-J",
                                   "root@" + route.jump.host,
                                   "-p",
                                   "2222",
                                   "root@" + route.sandbox.host,
                                   "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

TransportWorld::~TransportWorld() {
  for (auto it = pids_.rbegin(); it != pids_.rend(); ++it) terminate_process(*it, 2s);
  for (auto it = namespaces_.rbegin(); it != namespaces_.rend(); ++it) {
    // Deleting a namespace removes its veth ends and with them their peers.
    (void)run_command({"ip", "netns", "del", *it}, RunOptions{.deadline = 10s});
  }
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
}

}  // namespace isoharness::test
