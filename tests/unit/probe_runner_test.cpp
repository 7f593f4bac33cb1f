#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <stdexcept>
#include <thread>

#include "probes/core/posture_runner.h"
#include "probes/core/registry.h"

using namespace isoprobe;

namespace {

Observation quick(Context&) {
  Observation o;
  o.value = {{"answer", 42}};
  o.evidence = std::string(9000, 'e');  // more than the contract allows
  return o;
}
Observation throws(Context&) {
  throw std::runtime_error("boom");
}
// Two probes that each wait (at most 1.5 s, under their 2 s deadline) to see the other
// started: both see it only when they run at the same time.
std::atomic<bool> g_first_started{false}, g_beside_started{false};
Observation saw_other(std::atomic<bool>& mine, const std::atomic<bool>& other) {
  mine = true;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  while (!other && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Observation o;
  o.value = {{"saw_other", other.load()}};
  return o;
}
Observation first_meets_beside(Context&) {
  return saw_other(g_first_started, g_beside_started);
}
Observation beside_meets_first(Context&) {
  return saw_other(g_beside_started, g_first_started);
}
Observation sleeps(Context&) {
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  return Observation{};
}

}  // namespace

TEST_CASE("the runner turns overruns and exceptions into error observations", "[probe]") {
  std::vector<ProbeDescriptor> list = {
      {"quick", "returns", std::chrono::milliseconds(1000), quick},
      {"throws", "throws", std::chrono::milliseconds(1000), throws},
      {"sleeps", "overruns", std::chrono::milliseconds(50), sleeps},
  };
  PostureOptions options;
  PostureRun run = run_posture(options, list);
  CHECK(run.abandoned == 1);  // the sleeper was left behind, not waited for
  const auto& doc = run.document;
  CHECK(doc["schema"] == "isoharness.posture/v1");
  CHECK(doc["context"]["abandoned_probes"] == 1);
  REQUIRE(doc["observations"].size() == 3);
  const auto& q = doc["observations"][0];
  CHECK(q["name"] == "quick");
  CHECK(q["status"] == "ok");
  CHECK(q["value"]["answer"] == 42);
  CHECK(q["errno"] == 0);
  CHECK(q["evidence"].get<std::string>().size() <= 4096);
  CHECK(doc["observations"][1]["status"] == "error");
  CHECK(doc["observations"][1]["message"].get<std::string>().find("boom") != std::string::npos);
  CHECK(doc["observations"][2]["status"] == "error");
  CHECK(doc["observations"][2]["message"].get<std::string>().find("deadline") != std::string::npos);
}

TEST_CASE("probes after the run deadline are skipped, not run", "[probe]") {
  std::vector<ProbeDescriptor> list = {
      {"sleeps", "overruns", std::chrono::milliseconds(5000), sleeps},
      {"quick", "returns", std::chrono::milliseconds(1000), quick},
  };
  PostureOptions options;
  options.deadline = std::chrono::milliseconds(100);
  PostureRun run = run_posture(options, list);
  CHECK(run.document["observations"][0]["status"] == "error");
  CHECK(run.document["observations"][1]["status"] == "skipped");
}

TEST_CASE("every real probe runs on this machine and fills its contract shape", "[probe]") {
  PostureOptions options;
  PostureRun run = run_posture(options, all_probes());
  CHECK(run.abandoned == 0);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& o : run.document["observations"]) {
    INFO(o.dump());
    CHECK(o.contains("name"));
    CHECK(o.contains("value"));
    CHECK(o.contains("errno"));
    CHECK(o["evidence"].get<std::string>().size() <= 4096);
    by_name[o["name"]] = o;
  }
  auto ok = [&](const char* name) {
    INFO(name << ": " << by_name[name].dump());
    CHECK(by_name[name]["status"] == "ok");
    return by_name[name]["value"];
  };
  auto kernel = ok("kernel");
  CHECK(kernel["sysname"] == "Linux");
  CHECK(kernel["gvisor"] == false);  // this test runs on the host kernel
  CHECK(ok("capabilities")["eff"].get<std::string>().size() == 16);
  CHECK(ok("no_new_privs").is_boolean());
  CHECK(ok("seccomp")["status_mode"].is_number());
  CHECK(ok("identity")["uid"] == ::getuid());
  CHECK(ok("userns")["created"].is_boolean());
  CHECK(ok("mount")["tmpfs_mounted"].is_boolean());
  CHECK(ok("kallsyms")["state"].is_string());
  CHECK(ok("debugfs")["present"].is_boolean());
  CHECK(ok("sysrq")["opens_for_write"].is_boolean());
  CHECK(ok("devices")["extra"].is_array());
  CHECK(ok("runtime_sockets")["found"].is_array());
  CHECK(ok("kubernetes")["env"].is_array());
  CHECK(ok("processes")["visible"].get<int>() >= 1);
  auto net = ok("network");
  CHECK(std::find(net["interfaces"].begin(), net["interfaces"].end(), "lo") != net["interfaces"].end());
  auto addresses = ok("addresses");
  CHECK(addresses["ipv4"].is_array());
  CHECK(addresses["ipv6"].is_array());
  for (const auto& a : addresses["ipv4"])
    CHECK(a.get<std::string>().rfind("127.", 0) != 0);  // loopback left out
  auto fs = ok("filesystem");
  CHECK(fs["paths"].contains("/tmp"));
  CHECK(ok("boot_id")["boot_id"].get<std::string>().size() == 36);
  CHECK(by_name["egress"]["status"] == "skipped");  // no targets: nothing is contacted
}

TEST_CASE("a probe marked overlaps runs beside the others, and keeps its place", "[probe]") {
  // Each of the two waits to see the other started: one after the other, the first to
  // run would give up and say so.
  std::vector<ProbeDescriptor> list = {
      {"first", "waits for the other", std::chrono::milliseconds(2000), first_meets_beside},
      {"waits", "waits beside", std::chrono::milliseconds(2000), beside_meets_first, /*overlaps=*/true},
      {"last", "returns", std::chrono::milliseconds(1000), quick},
  };
  PostureOptions options;
  PostureRun run = run_posture(options, list);
  const auto& obs = run.document["observations"];
  REQUIRE(obs.size() == 3);
  CHECK(obs[0]["name"] == "first");
  CHECK(obs[0]["value"]["saw_other"] == true);
  CHECK(obs[1]["name"] == "waits");
  CHECK(obs[1]["status"] == "ok");
  CHECK(obs[1]["value"]["saw_other"] == true);
  CHECK(obs[2]["name"] == "last");
  CHECK(run.abandoned == 0);
}

TEST_CASE("an overlapping probe past its deadline is abandoned like any other", "[probe]") {
  std::vector<ProbeDescriptor> list = {
      {"waits", "overruns beside", std::chrono::milliseconds(50), sleeps, /*overlaps=*/true},
      {"last", "returns", std::chrono::milliseconds(1000), quick},
  };
  PostureOptions options;
  PostureRun run = run_posture(options, list);
  CHECK(run.abandoned == 1);
  CHECK(run.document["observations"][0]["status"] == "error");
  CHECK_THAT(run.document["observations"][0]["message"].get<std::string>(), Catch::Contains("deadline"));
  CHECK(run.document["observations"][1]["status"] == "ok");
}
