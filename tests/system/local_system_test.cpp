// System tests of the local backend: real sandboxes under runsc (gVisor, ptrace) and
// runc, reached with OpenSSH's own client through the jumphost, looked at with plain
// shell commands. One world serves every case of this program; the last case tears it
// down and checks that nothing of the run is left.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>

#include "harness/common/error.h"
#include "harness/deploy/local/address_plan.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/local_backend.h"
#include "probes/core/dns_packet.h"
#include "probes/core/tls_hello.h"
#include "tests/support/test_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
using namespace isoharness::test::local;
namespace dl = isoharness::deploy::local;
using nlohmann::json;

namespace {

struct Shared {
  ScratchDir dir;
  std::string key;
  std::unique_ptr<dl::LocalBackend> backend;
  std::map<std::string, deploy::SandboxHandle> sandboxes;
};

// Built on first use; destroyed at exit (tearing the world down) however the run ends.
Shared& shared() {
  static std::unique_ptr<Shared> s = [] {
    test::require_system({"runc", "runsc", "sshd", "ssh", "ssh-keygen", "nft", "dnsmasq", "ip", "nsenter"});
    auto x = std::make_unique<Shared>();
    x->key = make_login_key(x->dir.path);
    dl::LocalOptions opts;
    opts.run_id = "t" + dl::new_run_id().substr(0, 7);
    x->backend = dl::make_local_backend(dl::default_local_profile(), opts);
    return x;
  }();
  return *s;
}

json values(const std::string& name) {
  return json::parse(test::read_text(test::source_dir() + "/tests/fixtures/local/" + name));
}

deploy::SandboxRequest request(const std::string& name, const json& v,
                               const std::string& node_class = "tier") {
  Shared& s = shared();
  deploy::SandboxRequest req;
  req.run_id = s.backend->run_id();
  req.name = name;
  req.item_id = "test/" + name;
  req.values = v;
  req.node_class = node_class;
  req.authorized_key = s.key;
  return req;
}

const deploy::SandboxHandle& sandbox(const std::string& name, const json& v,
                                     const std::string& node_class = "tier") {
  Shared& s = shared();
  auto it = s.sandboxes.find(name);
  if (it != s.sandboxes.end()) return it->second;
  return s.sandboxes[name] = s.backend->deploy(request(name, v, node_class));
}

RunResult in_sandbox(const deploy::SandboxHandle& h, const std::string& script) {
  return ssh_through_jumphost(shared().dir.path, h.name, h.route, {"bash", "-c", script});
}

struct ReachTarget {
  std::string name;
  std::string dest;     // ADDR/PORT for bash's /dev/tcp
  std::string payload;  // sent once connected (printf format), may be empty
  std::string marker;   // text the far side's answer holds; empty: any byte
};

std::vector<ReachTarget> reach_targets(const deploy::SandboxHandle& h, const std::string& sibling) {
  const std::string http = printf_escaped("GET / HTTP/1.0\r\nHost: target.example.com\r\n\r\n");
  const std::string hello = printf_escaped(isoprobe::build_client_hello("target.example.com", {}));
  std::string query = isoprobe::build_dns_query(0x4948, "target.example.com").bytes;
  query = std::string{static_cast<char>(query.size() >> 8), static_cast<char>(query.size() & 0xff)} + query;
  auto world = [](const std::string& name) { return "isoharness world: " + name; };
  return {{"target", "203.0.113.10/80", http, world("target")},
          {"target-tls", "203.0.113.10/443", hello, world("target-tls")},
          {"blocked", "203.0.113.20/80", http, world("blocked")},
          {"metadata", "169.254.169.254/80", http, world("metadata")},
          {"cluster-api", "203.0.113.30/443", hello, world("cluster-api")},
          {"cidr-host", "198.51.100.10/80", http, world("cidr-host")},
          {"resolver", "203.0.113.53/53", printf_escaped(query), ""},
          {"jumphost", "192.0.2.130/22", "", "SSH-"},
          {"witness-log", h.route.jump.host + "/" + std::to_string(dl::kWitnessLogPort),
           printf_escaped("GET / HTTP/1.0\r\n\r\n"), "HTTP/"},
          {"sibling", sibling + "/2222", "", "SSH-"}};
}

// Tries every world target (and one other sandbox, and the witness log server on the
// jumphost's host-link address) with bash's /dev/tcp, all at once, each for at most 5 s;
// then whether a name resolves. Prints name=open|closed lines.
// A target is open only when the far side answered in its own words (the world servers
// name themselves, sshd's banner, an HTTP status line, any byte of a DNS answer): see
// answer_probe_function for why a connect alone is not evidence.
std::map<std::string, std::string> reach(const deploy::SandboxHandle& h, const std::string& sibling) {
  std::string script = answer_probe_function();
  for (const auto& t : reach_targets(h, sibling))
    script += "( echo " + t.name + "=$(probe " + t.dest + " '" + t.payload + "' '" + t.marker + "') ) & ";
  script +=
      "wait; if timeout 5 getent hosts target.example.com >/dev/null; "
      "then echo dns=resolves; else echo dns=fails; fi";
  RunResult r = in_sandbox(h, script);
  INFO("ssh: " << r.describe() << "\n" << r.out << r.err);
  REQUIRE(r.ok());
  std::map<std::string, std::string> out;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  REQUIRE(out.size() == 11);
  UNSCOPED_INFO(h.name << " sees: " << r.out << r.err);
  return out;
}

}  // namespace

TEST_CASE("strict under runsc and standard under runc are reachable through the jumphost",
          "[system][local]") {
  const auto& strict = sandbox("strict", values("values_strict_gvisor.json"), "tier");
  const auto& standard = sandbox("standard", values("values_standard_runc.json"), "tier");
  CHECK(strict.facts.runtime == "runsc");
  CHECK(strict.facts.extra["network_mode"] == "host-in-netns");
  CHECK(standard.facts.runtime == "runc");
  CHECK(strict.route.jump.host_key.rfind("ssh-ed25519 ", 0) == 0);
  CHECK(strict.route.sandbox.host_key != standard.route.sandbox.host_key);

  RunResult s =
      in_sandbox(strict, "uname -v; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; id -u; hostname");
  INFO(s.describe() << "\n" << s.out << s.err);
  REQUIRE(s.ok());
  CHECK_THAT(s.out, Catch::Contains("#1 SMP Sun Jan 10 15:06:54 PST 2016"));  // gVisor's kernel
  CHECK_THAT(s.out, Catch::Contains("CapEff:\t0000000000000000"));
  CHECK_THAT(s.out, Catch::Contains("strict"));  // hostname
  // This gVisor's /proc/self/status has no NoNewPrivs line; the strict runc case below
  // checks noNewPrivileges on the host kernel.

  RunResult r = in_sandbox(standard, "uname -r; grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status");
  INFO(r.describe() << "\n" << r.out << r.err);
  REQUIRE(r.ok());
  CHECK_THAT(r.out,
             Catch::Contains(dl::read_file_bounded("/proc/sys/kernel/osrelease", 256)));  // the host kernel
  CHECK_THAT(r.out, Catch::Contains("CapEff:\t00000000a80425fb"));
  CHECK_THAT(r.out, Catch::Contains("NoNewPrivs:\t0"));
  CHECK_THAT(r.out, Catch::Contains("Seccomp:\t2"));
}

TEST_CASE("sandboxes are not reachable from the host directly, and the jumphost only forwards",
          "[system][local]") {
  const auto& strict = sandbox("strict", values("values_strict_gvisor.json"), "tier");
  Shared& s = shared();
  // Through the host's link into this world (bound to that interface, so no packet can
  // leave through another one): the sandbox's sshd does not answer.
  RunOptions opts;
  opts.deadline = std::chrono::seconds(15);
  auto direct = run_command({helper_path(), "wait-banner", "--addr", strict.route.sandbox.host, "--port",
                             "2222", "--deadline-ms", "3000", "--device", "ih-" + s.backend->run_id()},
                            opts);
  REQUIRE(direct);
  CHECK_FALSE(direct->ok());
  // The jumphost's sshd answers the host.
  auto jump = run_command({helper_path(), "wait-banner", "--addr", strict.route.jump.host, "--port", "22",
                           "--deadline-ms", "3000", "--device", "ih-" + s.backend->run_id()},
                          opts);
  REQUIRE(jump);
  CHECK(jump->ok());
  // No shell on the jumphost, and no forwarding anywhere but sandboxes' port 2222.
  const std::string kh = s.dir.path + "/known_hosts-strict", cfg = s.dir.path + "/ssh_config-strict";
  RunOptions o;
  o.deadline = std::chrono::seconds(30);
  const std::string jump_dest = strict.route.jump.user + "@" + strict.route.jump.host;
  auto shell = run_command({"ssh", "-F", cfg, jump_dest, "--", "echo", "shell-reached"}, o);
  REQUIRE(shell);
  CHECK_FALSE(shell->ok());
  CHECK(shell->out.find("shell-reached") == std::string::npos);
  auto forward = run_command({"ssh", "-F", cfg, "-W", "203.0.113.10:80", jump_dest}, o);
  REQUIRE(forward);
  CHECK_FALSE(forward->ok());
  CHECK_THAT(forward->err, Catch::Contains("forwarding failed") || Catch::Contains("prohibited"));
  (void)kh;
}

TEST_CASE("strict reaches nothing and resolves no name", "[system][local]") {
  const auto& other = sandbox("standard", values("values_standard_runc.json"), "tier");
  const auto& strict = sandbox("strict", values("values_strict_gvisor.json"), "tier");
  auto r = reach(strict, other.route.sandbox.host);
  for (const auto& [name, state] : r) {
    INFO(name);
    CHECK(state == (name == "dns" ? "fails" : "closed"));
  }
  // The standard sandbox (no allow lists) is equally shut in.
  auto s = reach(other, strict.route.sandbox.host);
  for (const auto& [name, state] : s) {
    INFO("standard: " << name);
    CHECK(state == (name == "dns" ? "fails" : "closed"));
  }
}

TEST_CASE("allowDomains [target.example.com] reaches the target and nothing else", "[system][local]") {
  const auto& other = sandbox("strict", values("values_strict_gvisor.json"), "tier");
  const auto& h = sandbox("domains", values("values_strict_allow_domains.json"), "tier");
  CHECK(h.facts.extra["egress"]["addresses"] == json({"203.0.113.10"}));
  auto r = reach(h, other.route.sandbox.host);
  std::map<std::string, std::string> expected = {
      {"target", "open"},        {"target-tls", "open"},  {"blocked", "closed"},    {"metadata", "closed"},
      {"cluster-api", "closed"}, {"cidr-host", "closed"}, {"resolver", "open"},     {"jumphost", "closed"},
      {"sibling", "closed"},     {"dns", "resolves"},     {"witness-log", "closed"}};
  CHECK(r == expected);
  RunResult http =
      in_sandbox(h,
                 "getent hosts target.example.com; exec 3<>/dev/tcp/target.example.com/80; "
                 "printf 'GET / HTTP/1.0\\r\\nHost: target.example.com\\r\\n\\r\\n' >&3; timeout 3 cat <&3");
  INFO(http.describe() << "\n" << http.out << http.err);
  REQUIRE(http.ok());
  CHECK_THAT(http.out, Catch::Contains("203.0.113.10") && Catch::Contains("HTTP/1.0 200 OK") &&
                           Catch::Contains("isoharness world: target"));
}

TEST_CASE("allowCIDR opens exactly its range", "[system][local]") {
  const auto& other = sandbox("strict", values("values_strict_gvisor.json"), "tier");
  const auto& h = sandbox("cidr", values("values_strict_allow_cidr.json"), "tier");
  auto r = reach(h, other.route.sandbox.host);
  for (const auto& [name, state] : r) {
    INFO(name);
    if (name == "cidr-host")
      CHECK(state == "open");
    else if (name == "dns")
      CHECK(state == "fails");
    else
      CHECK(state == "closed");
  }
}

TEST_CASE("non_root and read_only_root: uid 1000, / read-only, /tmp and home writable", "[system][local]") {
  json runc_values = values("values_non_root_read_only.json");
  runc_values["services"]["default"]["runtimeClassName"] = "CLUSTER_DEFAULT";
  for (const auto& [name, v] : {std::pair{std::string("ro-gvisor"), values("values_non_root_read_only.json")},
                                std::pair{std::string("ro-runc"), runc_values}}) {
    const auto& h = sandbox(name, v, "tier");
    RunResult r =
        in_sandbox(h,
                   "grep -q '^NoNewPrivs:\t1' /proc/self/status || grep -q 'SMP Sun Jan 10' /proc/version "
                   "|| echo no_new_privs=missing; "
                   "id -u; "
                   "touch /probe 2>/dev/null && echo root=writable || echo root=readonly; "
                   "touch /etc/probe 2>/dev/null && echo etc=writable || echo etc=readonly; "
                   "touch /tmp/probe && echo tmp=writable || echo tmp=readonly; "
                   "touch /home/agent/probe && echo home=writable || echo home=readonly");
    INFO(name << ": " << r.describe() << "\n" << r.out << r.err);
    REQUIRE(r.ok());
    CHECK(r.out == "1000\nroot=readonly\netc=readonly\ntmp=writable\nhome=writable\n");
  }
}

TEST_CASE("node classes: tier pins one CPU, non-tier shares CPUs with a bounded noisy neighbour",
          "[system][local]") {
  const auto& standard = sandbox("standard", values("values_standard_runc.json"), "tier");
  CHECK(standard.facts.extra["cpus"] == "1");
  RunResult r = in_sandbox(standard, "nproc; cat /sys/fs/cgroup/cpuset/cpuset.cpus");
  INFO(r.describe() << r.out << r.err);
  REQUIRE(r.ok());
  CHECK(r.out == "1\n1\n");

  Shared& s = shared();
  const auto& noisy = sandbox("noisy", values("values_standard_runc.json"), "non-tier");
  CHECK(noisy.facts.extra["noisy_neighbour"] == true);
  auto neighbours = [&] {
    int n = 0;
    for (const auto& l : leftovers_of(dl::kDefaultStateRoot, s.backend->run_id()))
      if (l.find("noise --tag ih-" + s.backend->run_id() + "-noisy") != std::string::npos) ++n;
    return n;
  };
  CHECK(neighbours() == 1);
  RunResult n = in_sandbox(noisy, "nproc");
  REQUIRE(n.ok());
  CHECK(n.out == "2\n");
  s.backend->destroy(noisy);
  s.sandboxes.erase("noisy");
  CHECK(neighbours() == 0);
}

TEST_CASE("a control that cannot be applied stops the sandbox before it starts", "[system][local]") {
  Shared& s = shared();
  deploy::SandboxRequest req = request("refused", values("values_strict_gvisor.json"));
  req.values["services"]["default"]["runtimeClassName"] = "kata";
  CHECK_THROWS_WITH(s.backend->deploy(req), Catch::Contains("kata"));
  req.values = values("values_strict_gvisor.json");
  req.values["services"]["default"]["securityContext"]["seLinuxOptions"] = {{"level", "s0:c1"}};
  CHECK_THROWS_AS(s.backend->deploy(req), InfraError);
  auto names = dl::list_netns();
  CHECK(std::find(names.begin(), names.end(), "ih-" + s.backend->run_id() + "-s-refused") == names.end());
}

namespace {

std::string cmdline_of(pid_t pid) {
  std::string cmd = dl::read_file_bounded("/proc/" + std::to_string(pid) + "/cmdline", 8192);
  for (auto& c : cmd)
    if (c == '\0') c = ' ';
  return cmd;
}

pid_t parent_of(pid_t pid) {
  std::istringstream in(dl::read_file_bounded("/proc/" + std::to_string(pid) + "/status", 8192));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("PPid:", 0) == 0) return static_cast<pid_t>(std::stol(line.substr(5)));
  return -1;
}

// Processes (not the adopter itself) whose command line names the container.
std::vector<pid_t> processes_naming(const std::string& text) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    const std::string cmd = cmdline_of(pid);
    if (cmd.find(text) != std::string::npos && cmd.find("isoharness-world-helper adopt") == std::string::npos)
      out.push_back(pid);
  }
  return out;
}

}  // namespace

TEST_CASE("the adopt helper reports the program's exit and reaps what it left running", "[system][local]") {
  // The protocol run_detaching relies on: one status line, then stdout closed, then every
  // adopted process reaped as it ends, then exit once none is left.
  auto failed = run_command({helper_path(), "adopt", "--max-seconds", "30", "--", "sh", "-c", "exit 3"});
  REQUIRE(failed.has_value());
  CHECK(failed->out == "exit 3\n");
  CHECK(failed->exited);
  auto missing = run_command({helper_path(), "adopt", "--", "/nonexistent/isoharness-program"});
  REQUIRE(missing.has_value());
  CHECK(missing->out == "exit 127\n");
  CHECK_THAT(missing->err, Catch::Contains("cannot start /nonexistent/isoharness-program"));

  ScratchDir dir;
  const std::string pid_file = dir.path + "/left.pid";
  std::array<int, 2> fds{};
  REQUIRE(::pipe2(fds.data(), O_CLOEXEC) == 0);
  auto adopter = spawn_detached({helper_path(), "adopt", "--max-seconds", "60", "--", "sh", "-c",
                                 "sleep 300 & echo $! > " + pid_file + "; exit 0"},
                                dir.path + "/adopt.log", {}, fds[1]);
  ::close(fds[1]);
  REQUIRE(adopter.has_value());
  std::string status;
  std::array<char, 64> buf{};
  for (ssize_t n; (n = ::read(fds[0], buf.data(), buf.size())) > 0;)
    status.append(buf.data(), static_cast<std::size_t>(n));
  ::close(fds[0]);
  CHECK(status == "exit 0\n");  // and stdout closed: the read reached its end while sleep runs
  const pid_t left = static_cast<pid_t>(std::stol(test::read_text(pid_file)));
  CHECK(parent_of(left) == *adopter);  // adopted when sh exited, not handed to PID 1
  CHECK(::kill(*adopter, 0) == 0);     // still there, for as long as sleep runs
  ::kill(left, SIGKILL);
  // Nothing left to adopt: it reaps sleep and exits 0 on its own (bounded wait, not timed).
  int wait_status = -1;
  pid_t waited = 0;
  for (int i = 0; i < 1000 && waited == 0; ++i) {
    waited = ::waitpid(*adopter, &wait_status, WNOHANG);
    if (waited == 0) ::usleep(10'000);
  }
  if (waited == 0) {
    ::kill(*adopter, SIGKILL);
    ::waitpid(*adopter, &wait_status, 0);
  }
  CHECK(waited == *adopter);
  CHECK(WIFEXITED(wait_status));
  CHECK(WEXITSTATUS(wait_status) == 0);
  CHECK(::kill(left, 0) != 0);  // reaped by the adopter, not a zombie
}

TEST_CASE("a container's processes are the adopter's children, and go with the sandbox", "[system][local]") {
  Shared& s = shared();
  const deploy::SandboxHandle h = s.backend->deploy(request("adopted", values("values_strict_gvisor.json")));
  const std::string container = h.facts.extra.value("container_id", "");
  REQUIRE_FALSE(container.empty());
  const auto running = processes_naming(container);
  REQUIRE_FALSE(running.empty());  // runsc's sandbox process names its container
  std::vector<pid_t> adopters;
  for (pid_t pid : running) {
    const pid_t parent = parent_of(pid);
    INFO(pid << ": " << cmdline_of(pid) << " has parent " << parent << ": " << cmdline_of(parent));
    CHECK_THAT(cmdline_of(parent), Catch::Contains("isoharness-world-helper adopt"));
    adopters.push_back(parent);
  }
  s.backend->destroy(h);
  for (pid_t pid : running) CHECK(::kill(pid, 0) != 0);
  for (pid_t pid : adopters) CHECK(::kill(pid, 0) != 0);  // reaped, not left a zombie
}

TEST_CASE("a destroyed sandbox's address and veth are reusable at once", "[system][local]") {
  // The next sandbox takes the lowest free index, so it gets the same address and the same
  // node-side veth name the moment the last one is destroyed. A namespace outlives
  // `ip netns delete` while any process still holds it (a runtime process that is slow to
  // die, as on a loaded CI machine), and so would a veth left to it: "File exists". The
  // test holds each destroyed sandbox's namespace open to make that certain.
  Shared& s = shared();
  std::string address;
  int held = -1;
  for (int i = 0; i < 4; ++i) {
    deploy::SandboxRequest req = request("reuse" + std::to_string(i), values("values_strict_gvisor.json"));
    deploy::SandboxHandle h;
    REQUIRE_NOTHROW(h = s.backend->deploy(req));
    if (i == 0) address = h.route.sandbox.host;
    CHECK(h.route.sandbox.host == address);
    if (held >= 0) ::close(held);
    held = ::open(dl::netns_path(dl::netns_name(s.backend->run_id(), "s-" + req.name)).c_str(),
                  O_RDONLY | O_CLOEXEC);
    REQUIRE(held >= 0);
    s.backend->destroy(h);
  }
  ::close(held);
}

TEST_CASE("destroying every sandbox and the world leaves nothing behind", "[system][local]") {
  Shared& s = shared();
  sandbox("strict", values("values_strict_gvisor.json"), "tier");
  const std::string run = s.backend->run_id();
  for (auto& [name, h] : s.sandboxes) s.backend->destroy(h);
  auto names = dl::list_netns();
  CHECK(std::none_of(names.begin(), names.end(),
                     [&](const auto& n) { return n.rfind("ih-" + run + "-s-", 0) == 0; }));
  s.sandboxes.clear();
  s.backend.reset();
  auto left = leftovers_of(dl::kDefaultStateRoot, run);
  for (const auto& l : left) UNSCOPED_INFO(l);
  CHECK(left.empty());
}
