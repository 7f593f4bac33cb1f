// Lifecycle of `isoharness local up`: the real binary deploys a sandbox, OpenSSH reaches
// it, and the test then stops the harness — SIGTERM after it is up, SIGTERM in the middle
// of building, SIGKILL followed by `isoharness local cleanup --run` — and checks that
// nothing of the run is left on the machine. Also `isoharness local doctor`.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>
#include <thread>

#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/local_backend.h"
#include "harness/deploy/local/nft_rules.h"
#include "tests/support/test_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
using namespace isoharness::test::local;
namespace dl = isoharness::deploy::local;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

std::string isoharness_bin() {
  return test::binary_dir() + "/harness/cli/isoharness";
}

struct UpProcess {
  pid_t pid = -1;
  std::string log;
  ~UpProcess() {
    if (pid > 0) terminate_process(pid, 30000ms);
  }
};

UpProcess start_up(const std::string& dir, const std::string& run_id, const std::string& values_file) {
  test::require_system({"runc", "runsc", "sshd", "ssh", "ssh-keygen", "nft", "dnsmasq", "ip", "nsenter"});
  UpProcess p;
  p.log = dir + "/up-" + run_id + ".log";
  auto pid = spawn_detached(
      {isoharness_bin(), "local", "up", "--values", values_file, "--run-id", run_id, "--authorized-key",
       dir + "/id_ed25519.pub", "--identity", dir + "/id_ed25519", "--json", "--hold-seconds", "300"},
      p.log);
  REQUIRE(pid);
  p.pid = *pid;
  return p;
}

// The JSON line `local up --json` prints once the sandbox is SSH-ready.
json wait_until_up(const UpProcess& p) {
  for (int i = 0; i < 1800; ++i) {  // at most 180 s
    std::string text = dl::read_file_bounded(p.log);
    auto start = text.find("\n{");
    if (text.rfind("{", 0) == 0)
      start = 0;
    else if (start != std::string::npos)
      ++start;
    if (start != std::string::npos) {
      auto end = text.find('\n', start);
      if (end != std::string::npos) return json::parse(text.substr(start, end - start));
    }
    int status;
    if (::waitpid(p.pid, &status, WNOHANG) == p.pid) FAIL("isoharness local up exited early:\n" << text);
    std::this_thread::sleep_for(100ms);
  }
  FAIL("isoharness local up printed no JSON within 180 s:\n" << dl::read_file_bounded(p.log));
  return {};
}

int wait_exit(UpProcess& p, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    int status;
    if (::waitpid(p.pid, &status, WNOHANG) == p.pid) {
      p.pid = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(50ms);
  }
  return -1;
}

transport::SshRoute route_of(const json& up) {
  transport::SshRoute r;
  r.jump = {up["jump"]["host"], up["jump"]["port"], up["jump"]["user"], up["jump"]["host_key"]};
  r.sandbox = {up["sandbox"]["host"], up["sandbox"]["port"], up["sandbox"]["user"],
               up["sandbox"]["host_key"]};
  return r;
}

std::string fixture(const std::string& name) {
  return test::source_dir() + "/tests/fixtures/local/" + name;
}

std::string fresh_run_id() {
  return "l" + dl::new_run_id().substr(0, 7);
}

}  // namespace

TEST_CASE("local up: reachable with ssh -J, SIGTERM tears everything down", "[system][local]") {
  ScratchDir dir;
  make_login_key(dir.path);
  const std::string run = fresh_run_id();
  UpProcess up = start_up(dir.path, run, fixture("values_strict_gvisor.json"));
  json info = wait_until_up(up);
  CHECK(info["run_id"] == run);
  CHECK(info["facts"]["runtime"] == "runsc");
  CHECK_THAT(info["ssh_command"].get<std::string>(), Catch::Contains("-J jump@"));
  RunResult r = ssh_through_jumphost(dir.path, "up", route_of(info), {"id", "-un"});
  INFO(r.describe() << r.err);
  CHECK(r.ok());
  CHECK(r.out == "agent\n");
  CHECK_FALSE(leftovers_of(dl::kDefaultStateRoot, run).empty());  // the sandbox exists now

  REQUIRE(::kill(up.pid, SIGTERM) == 0);
  CHECK(wait_exit(up, 90s) == 128 + SIGTERM);
  auto left = leftovers_of(dl::kDefaultStateRoot, run);
  for (const auto& l : left) UNSCOPED_INFO(l);
  CHECK(left.empty());
}

TEST_CASE("local up: SIGTERM while the world is being built leaves nothing", "[system][local]") {
  ScratchDir dir;
  make_login_key(dir.path);
  const std::string run = fresh_run_id();
  UpProcess up = start_up(dir.path, run, fixture("values_standard_runc.json"));
  std::this_thread::sleep_for(1500ms);
  REQUIRE(::kill(up.pid, SIGTERM) == 0);
  int rc = wait_exit(up, 120s);
  CHECK((rc == 128 + SIGTERM || rc == 0));
  auto left = leftovers_of(dl::kDefaultStateRoot, run);
  for (const auto& l : left) UNSCOPED_INFO(l);
  CHECK(left.empty());
}

TEST_CASE("local up killed with SIGKILL: `local cleanup --run` removes what it left", "[system][local]") {
  ScratchDir dir;
  make_login_key(dir.path);
  const std::string run = fresh_run_id();
  UpProcess up = start_up(dir.path, run, fixture("values_standard_runc.json"));
  json info = wait_until_up(up);
  REQUIRE(::kill(up.pid, SIGKILL) == 0);
  CHECK(wait_exit(up, 30s) == 128 + SIGKILL);
  auto left = leftovers_of(dl::kDefaultStateRoot, run);
  CHECK_FALSE(left.empty());  // a crash leaves the world behind ...

  RunOptions opts;
  opts.deadline = 120s;
  auto all =
      run_command({isoharness_bin(), "local", "cleanup", "--all"}, opts);  // ... --all takes dead runs only
  REQUIRE(all);
  auto cleanup = run_command({isoharness_bin(), "local", "cleanup", "--run", run}, opts);
  REQUIRE(cleanup);
  if (all->out.find("directory " + std::string(dl::kDefaultStateRoot) + "/" + run) != std::string::npos) {
    CHECK(cleanup->exit_code == 3);  // --all already removed it; nothing recorded any more
  } else {
    INFO(cleanup->out << cleanup->err);
    CHECK(cleanup->exit_code == 0);
    CHECK_THAT(cleanup->out, Catch::Contains("netns ih-" + run + "-node"));
  }
  left = leftovers_of(dl::kDefaultStateRoot, run);
  for (const auto& l : left) UNSCOPED_INFO(l);
  CHECK(left.empty());
}

// A run whose record is gone but whose host objects stayed (a guard table left in the
// host namespace breaks every later test that routes world addresses over links not named
// ih-*): `cleanup --all` finds them by name and removes them.
TEST_CASE("local cleanup --all removes host objects of a run with no record", "[system][local]") {
  test::require_system({"nft", "ip"});
  const std::string run = fresh_run_id();
  REQUIRE_FALSE(std::filesystem::exists(std::string(dl::kDefaultStateRoot) + "/" + run));
  REQUIRE(dl::run_quietly({"nft", "-f", "-"}, 10s, dl::host_guard_ruleset(run)));
  REQUIRE(dl::run_quietly({"ip", "netns", "add", dl::netns_name(run, "node")}));
  RunOptions opts;
  opts.deadline = 120s;
  auto all = run_command({isoharness_bin(), "local", "cleanup", "--all"}, opts);
  REQUIRE(all);
  INFO(all->out << all->err);
  CHECK(all->exit_code == 0);
  CHECK_THAT(all->out, Catch::Contains("host nftables table " + dl::nft_table_name(run)));
  CHECK_THAT(all->out, Catch::Contains("netns " + dl::netns_name(run, "node")));
  CHECK_FALSE(dl::run_quietly({"nft", "list", "table", "inet", dl::nft_table_name(run)}));
  auto left = leftovers_of(dl::kDefaultStateRoot, run);
  for (const auto& l : left) UNSCOPED_INFO(l);
  CHECK(left.empty());
}

TEST_CASE("local doctor finds every prerequisite on this machine", "[system][local]") {
  test::require_system({"runc", "runsc", "sshd", "nft", "dnsmasq", "ip", "nsenter"});
  RunOptions opts;
  opts.deadline = 60s;
  auto r = run_command({isoharness_bin(), "local", "doctor"}, opts);
  REQUIRE(r);
  INFO(r->out << r->err);
  CHECK(r->exit_code == 0);
  CHECK_THAT(r->out, Catch::Contains("every prerequisite is present"));
  CHECK_THAT(r->out, Catch::Contains("network namespaces, veth pairs and nftables work"));
}

// The host guard, tried in a namespace of its own that stands in for the host: a veth
// "uplink" with the default route plays the way off the machine, a veth "ih-guardtest"
// plays a world's host link. Both peers stay in that namespace, so nothing leaves it even
// if the guard were wrong; the transmit counters tell where a packet (or the ARP request
// ahead of it: the peers answer none) went. IPv6 is off there, so nothing else transmits.
TEST_CASE("the host guard drops world addresses except through a host link", "[system][local]") {
  test::require_system({"nft", "ip", "nsenter"});
  const std::string ns = "ih-guardtest-" + std::to_string(::getpid());
  REQUIRE(run_command({"ip", "netns", "add", ns})->ok());
  struct Remove {
    std::string ns;
    ~Remove() { (void)run_command({"ip", "netns", "delete", ns}); }
  } remove{ns};
  auto in_ns = [&](std::vector<std::string> argv) {
    auto r = run_command(dl::in_netns(ns, std::move(argv)));
    REQUIRE(r);
    return *r;
  };
  for (auto argv : std::vector<std::vector<std::string>>{
           {"sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"},
           {"ip", "link", "set", "lo", "up"},
           {"ip", "link", "add", "uplink", "type", "veth", "peer", "name", "uplink-peer"},
           {"ip", "link", "set", "uplink", "up"},
           {"ip", "link", "set", "uplink-peer", "up"},
           {"ip", "route", "add", "default", "dev", "uplink"},
           {"ip", "link", "add", "ih-guardtest", "type", "veth", "peer", "name", "guardtest-peer"},
           {"ip", "link", "set", "ih-guardtest", "up"},
           {"ip", "link", "set", "guardtest-peer", "up"},
           {"ip", "route", "add", "198.51.100.128/30", "dev", "ih-guardtest"}}) {
    auto r = in_ns(argv);
    INFO(r.describe() << r.err);
    REQUIRE(r.ok());
  }
  RunOptions with_rules;
  with_rules.stdin_data = dl::host_guard_ruleset("guardtest");
  auto nft = run_command(dl::in_netns(ns, {"nft", "-f", "-"}), with_rules);
  REQUIRE(nft);
  INFO(nft->err);
  REQUIRE(nft->ok());
  auto tx = [&](const std::string& dev) {  // packets the device has transmitted
    auto r = in_ns({"ip", "-s", "-j", "link", "show", "dev", dev});
    auto j = json::parse(r.out, nullptr, false);
    INFO(r.describe() << " " << r.out << r.err);
    REQUIRE((j.is_array() && j.size() == 1));
    return j[0]["stats64"]["tx"]["packets"].get<long long>();
  };
  auto send = [&](const std::string& addr) {
    return in_ns({"bash", "-c", "echo x > /dev/udp/" + addr + "/9"});
  };
  const long long up0 = tx("uplink"), link0 = tx("ih-guardtest");
  for (const char* a : {"203.0.113.77", "198.51.100.5", "169.254.169.254"}) {
    auto r = send(a);
    INFO(a << ": " << r.describe() << " " << r.err);
    CHECK_FALSE(r.ok());  // dropped in the output hook: the sender sees EPERM
  }
  CHECK(tx("uplink") == up0);
  auto through_link = send("198.51.100.129");  // a world's host link is the one way out
  INFO(through_link.describe() << " " << through_link.err);
  CHECK(through_link.ok());
  CHECK(tx("ih-guardtest") > link0);  // the ARP request, perhaps retried
  auto counters = in_ns({"nft", "list", "table", "inet", "ih_guardtest"});
  CHECK_THAT(counters.out, Catch::Contains("counter packets 3"));
}
