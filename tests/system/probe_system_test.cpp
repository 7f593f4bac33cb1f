// isoprobe against the real runtimes. One bundle, three places:
//   (a) the host, (b) runc with every capability dropped, no_new_privs and a seccomp
//   filter, rootfs = the isoprobe bundle only, a fresh network namespace, (c) runsc
//   --platform=ptrace --network=none with the same bundle and spec.
// The assertions are the differences the reference describes.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"
#include "tests/system/probe_oci.h"

using namespace isoharness;
using namespace isoharness::probe_test;
using nlohmann::json;

namespace {

std::string bundle_dir() {
  return test::binary_dir() + "/probes/isoprobe-bundle";
}

std::map<std::string, json> observations(const json& doc) {
  std::map<std::string, json> m;
  for (const auto& o : doc.at("observations")) m[o.at("name").get<std::string>()] = o;
  return m;
}

json parse_posture(const RunResult& r, const std::string& where) {
  INFO(where << ": " << r.describe() << "\nstderr: " << r.err.substr(0, 2000));
  REQUIRE(r.ok());
  json doc = json::parse(r.out, nullptr, false);
  REQUIRE_FALSE(doc.is_discarded());
  REQUIRE(doc.at("schema") == "isoharness.posture/v1");
  return doc;
}

json value(std::map<std::string, json>& obs, const std::string& name) {
  INFO(name << ": " << obs[name].dump());
  REQUIRE(obs.count(name) == 1);
  CHECK(obs[name]["status"] == "ok");
  return obs[name]["value"];
}

// One bundle for the whole program, so each runtime's document is produced once.
struct Fixture {
  std::unique_ptr<ProbeBundle> bundle;
  json host, runc, runsc;
};

Fixture& fixture() {
  static Fixture f = [] {
    test::require_system({"runc", "runsc"});
    Fixture x;
    x.bundle = std::make_unique<ProbeBundle>(bundle_dir());
    RunOptions o;
    o.deadline = std::chrono::seconds(30);
    auto host = run_command({bundle_dir() + "/isoprobe", "posture", "--compact"}, o);
    REQUIRE(host);
    x.host = parse_posture(*host, "host");
    ContainerSpec strict;
    auto runc = x.bundle->run(Runtime::runc, strict, {"posture", "--compact"}, std::chrono::seconds(60));
    INFO((runc ? "" : runc.error().message));
    REQUIRE(runc);
    x.runc = parse_posture(runc->result, "runc");
    auto runsc = x.bundle->run(Runtime::runsc, strict, {"posture", "--compact"}, std::chrono::seconds(120));
    INFO((runsc ? "" : runsc.error().message));
    REQUIRE(runsc);
    x.runsc = parse_posture(runsc->result, "runsc");
    // Kept for whoever reads a failure: the three documents side by side.
    for (auto [where, doc] : {std::pair{"host", &x.host}, {"runc", &x.runc}, {"runsc", &x.runsc}})
      std::ofstream(test::binary_dir() + "/tests/probe_system_" + where + ".json") << doc->dump(2);
    return x;
  }();
  return f;
}

}  // namespace

TEST_CASE("kernel: gVisor only under runsc, from several signals", "[system][probe]") {
  auto& f = fixture();
  auto host = observations(f.host), runc = observations(f.runc), runsc = observations(f.runsc);
  CHECK(value(host, "kernel")["gvisor"] == false);
  CHECK(value(runc, "kernel")["gvisor"] == false);
  auto g = value(runsc, "kernel");
  CHECK(g["gvisor"] == true);
  CHECK(g["version"] == "#1 SMP Sun Jan 10 15:06:54 PST 2016");
  CHECK(g["gvisor_signals"].size() >= 2);
  CHECK(value(runc, "kernel")["release"] == value(host, "kernel")["release"]);
}

TEST_CASE("capabilities: CapEff 0 when dropped, under both runtimes", "[system][probe]") {
  auto& f = fixture();
  auto host = observations(f.host), runc = observations(f.runc), runsc = observations(f.runsc);
  CHECK(value(host, "capabilities")["eff"] != "0000000000000000");  // we run the test as root
  CHECK(value(runc, "capabilities")["eff"] == "0000000000000000");
  CHECK(value(runc, "capabilities")["bnd"] == "0000000000000000");
  CHECK(value(runc, "capabilities")["eff_names"].empty());
  CHECK(value(runsc, "capabilities")["eff"] == "0000000000000000");
  CHECK(value(runc, "no_new_privs") == true);
  CHECK(value(runsc, "no_new_privs") == true);
  CHECK(value(host, "no_new_privs") == false);
}

TEST_CASE("seccomp: filtered under runc, emulated (0) under runsc", "[system][probe]") {
  auto& f = fixture();
  auto runc = observations(f.runc), runsc = observations(f.runsc);
  CHECK(value(runc, "seccomp")["status_mode"] == 2);
  CHECK(value(runc, "seccomp")["prctl_mode"] == 2);
  CHECK(value(runsc, "seccomp")["status_mode"] == 0);
}

TEST_CASE("user namespace: refused under runc, emulated under runsc", "[system][probe]") {
  auto& f = fixture();
  auto runc = observations(f.runc), runsc = observations(f.runsc);
  CHECK(value(runc, "userns")["created"] == false);
  CHECK(value(runc, "userns")["error"] == "EPERM");
  CHECK(value(runsc, "userns")["created"] == true);
  CHECK(value(runc, "mount")["tmpfs_mounted"] == false);
  CHECK(value(runsc, "mount")["tmpfs_mounted"] == false);  // no CAP_SYS_ADMIN, gVisor enforces it too
}

TEST_CASE("kallsyms: populated or zeroed on the host kernel, absent or empty in gVisor", "[system][probe]") {
  auto& f = fixture();
  auto host = observations(f.host), runc = observations(f.runc), runsc = observations(f.runsc);
  std::string h = value(host, "kallsyms")["state"];
  CHECK((h == "populated" || h == "zeroed"));
  CHECK(value(runc, "kallsyms")["state"] == "zeroed");  // no CAP_SYSLOG: addresses hidden
  CHECK(value(runc, "kallsyms")["lines"].get<int>() > 1000);
  std::string g = value(runsc, "kallsyms")["state"];
  CHECK((g == "absent" || g == "empty"));
  CHECK(value(runsc, "debugfs")["present"] == false);
}

TEST_CASE("boot_id: the host's under runc, gVisor's own under runsc", "[system][probe]") {
  auto& f = fixture();
  auto host = observations(f.host), runc = observations(f.runc), runsc = observations(f.runsc);
  std::string id = host_boot_id();
  CHECK(value(host, "boot_id")["boot_id"] == id);
  CHECK(value(runc, "boot_id")["boot_id"] == id);
  CHECK(value(runsc, "boot_id")["boot_id"] != id);
}

TEST_CASE("filesystem, processes and network inside the minimal containers", "[system][probe]") {
  auto& f = fixture();
  for (auto* doc : {&f.runc, &f.runsc}) {
    auto obs = observations(*doc);
    auto fs = value(obs, "filesystem");
    CHECK(fs["root_writable"] == false);  // read-only root in the spec
    CHECK(fs["paths"]["/tmp"] == true);   // tmpfs scratch
    CHECK(fs["cgroup_writable"] == false);
    auto procs = value(obs, "processes");
    CHECK(procs["visible"].get<int>() <= 3);  // our own PID namespace
    CHECK(value(obs, "network")["interfaces"].size() <= 1);
    CHECK(value(obs, "runtime_sockets")["found"].empty());
    CHECK(value(obs, "kubernetes")["service_account_token"] == false);
    CHECK((value(obs, "sysrq")["opens_for_write"] == false || doc == &f.runsc));
    CHECK(obs["egress"]["status"] == "skipped");
  }
}

TEST_CASE("the bundle: version, bad usage, and egress to a host loopback listener", "[system][probe]") {
  test::require_system({});
  RunOptions o;
  o.deadline = std::chrono::seconds(20);
  auto v = run_command({bundle_dir() + "/isoprobe", "version"}, o);
  REQUIRE(v);
  CHECK(v->ok());
  CHECK(v->out.rfind("isoprobe ", 0) == 0);
  auto bad = run_command({bundle_dir() + "/isoprobe", "posture", "--target", "broken"}, o);
  REQUIRE(bad);
  CHECK(bad->exit_code == 2);
  CHECK(bad->err.find("--target 'broken'") != std::string::npos);

  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
  REQUIRE(::listen(fd, 4) == 0);
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  std::string port = std::to_string(ntohs(sa.sin_port));
  auto r = run_command(
      {bundle_dir() + "/isoprobe", "posture", "--compact", "--target", "lo=127.0.0.1:" + port, "--target",
       "name=nothing.invalid:80", "--resolver", "127.0.0.1:1", "--egress-deadline-ms", "1500"},
      o);
  ::close(fd);
  REQUIRE(r);
  auto obs = observations(parse_posture(*r, "host egress"));
  auto targets = value(obs, "egress")["targets"];
  REQUIRE(targets.size() == 2);
  CHECK(targets[0]["result"] == "connected");
  CHECK(targets[1]["result"] == "dns_failed");  // nobody answers DNS on 127.0.0.1:1
}
