// The node verdict rule (harness/verify/node_verdict.cc, docs/CONTRACTS.md §4.8), row by
// row for each posture family: the sandbox's clean report with the node agreeing passes;
// the same report with the node seeing the family broken fails naming both sides; the node
// not seeing the fact makes the check unwitnessed; `node_view: none` marks it self-reported.
#include <catch2/catch.hpp>
#include <functional>

#include "harness/verify/verify.h"
#include "tests/unit/node_view_fixture.h"
#include "tests/unit/policy_test_util.h"
#include "tests/unit/posture_fixture.h"

using namespace isoharness;
using deploy::NodeContainer;
using nlohmann::json;

namespace {

json plan_expect(bool gvisor) {
  std::string y =
      "eval_set:\n  isolation: {level: strict, non_root: true, read_only_root: true}\n  tasks:\n    - name: "
      "t\n"
      "      items:\n        - name: i\n";
  if (!gvisor) y += "sandboxes: [{task: 0, item: 0, services: {default: {gpu: true}}}]\n";
  auto plan = test::plan_yaml(y);
  REQUIRE(plan.accepted());
  return plan.items[0].expect;
}

verify::HostFacts host() {
  verify::HostFacts h;
  h.boot_id = "host-boot-id";
  h.hostname = "vm";
  h.pid1 = "init";
  h.process_count = 120;
  h.interfaces = {"lo", "eth0", "docker0"};
  return h;
}

const verify::CheckResult* find(const std::vector<verify::CheckResult>& checks, const std::string& control) {
  for (const auto& c : checks)
    if (c.control == control) return &c;
  return nullptr;
}

std::vector<verify::CheckResult> judge(bool gvisor, const deploy::NodeView* view, bool waived = false) {
  static const std::vector<deploy::EgressTarget> kNone;
  const json expect = plan_expect(gvisor);
  const json posture = test::clean_posture(gvisor);
  const auto h = host();
  return verify::verify_sandbox(
      {expect, posture, h, kNone, policy::Level::strict, nullptr, true, view, waived});
}

bool has_judge(const verify::CheckResult& c, Judge j) {
  return std::find(c.judges.begin(), c.judges.end(), j) != c.judges.end();
}

struct Family {
  const char* control;
  bool runc, runsc;                            // judged by the node under each runtime
  std::function<void(NodeContainer&)> breaks;  // the node sees the family broken
  std::function<void(NodeContainer&)> hides;   // the node cannot say
  const char* node_words;                      // what the failing reason names of the node's side
};

// The families of the process (runtime, capabilities, privileges, ids).
std::vector<Family> process_families() {
  return {
      {"kernel", true, true,
       [](NodeContainer& c) {
         const bool g = c.runtime == deploy::NodeRuntime::runsc;
         c.runtime = g ? deploy::NodeRuntime::runc : deploy::NodeRuntime::runsc;
         if (!g) c.gvisor = deploy::NodeGvisor{};
       },
       [](NodeContainer& c) { c.runtime = deploy::NodeRuntime::unknown; }, "the node sees run"},
      {"capabilities", true, true, [](NodeContainer& c) { c.process.cap_eff = 0x200000ULL; },
       [](NodeContainer& c) { c.process.cap_eff.reset(); }, "CapEff 0000000000200000"},
      {"capability_bounding", true, true, [](NodeContainer& c) { c.process.cap_bnd = 0xa80425fbULL; },
       [](NodeContainer& c) { c.process.cap_bnd.reset(); }, "CapBnd 00000000a804"},
      {"capability:CAP_SYS_ADMIN", true, true, [](NodeContainer& c) { c.process.cap_bnd = 1ULL << 21; },
       [](NodeContainer& c) { c.process.cap_bnd.reset(); }, "CAP_SYS_ADMIN in CapEff or CapBnd"},
      {"no_new_privs", true, true, [](NodeContainer& c) { c.process.no_new_privs = false; },
       [](NodeContainer& c) { c.process.no_new_privs.reset(); }, "NoNewPrivs 0"},
      {"seccomp", true, true,
       [](NodeContainer& c) {
         c.process.seccomp_mode = 0;
         if (c.gvisor) c.gvisor->sentry.seccomp_mode = 0;
       },
       [](NodeContainer& c) { c.process.seccomp_mode.reset(); }, "Seccomp 0"},
      {"uid", true, true, [](NodeContainer& c) { c.process.uid = 0; },
       [](NodeContainer& c) { c.process.uid.reset(); }, "uid 0"},
  };
}

// The families of the filesystem, the namespaces and the kernel's interfaces.
std::vector<Family> filesystem_families() {
  return {
      {"root_filesystem", true, true, [](NodeContainer& c) { c.filesystem.root_read_only = false; },
       [](NodeContainer& c) { c.filesystem.root_read_only.reset(); }, "root mount writable"},
      {"host_devices", true, true, [](NodeContainer& c) { c.devices = std::vector<std::string>{"kmsg"}; },
       [](NodeContainer& c) { c.devices.reset(); }, "kmsg"},
      {"runtime_socket", true, true,
       [](NodeContainer& c) { c.filesystem.runtime_sockets = std::vector<std::string>{"/run/docker.sock"}; },
       [](NodeContainer& c) { c.filesystem.runtime_sockets.reset(); }, "/run/docker.sock"},
      {"pid_namespace", true, true,
       [](NodeContainer& c) {
         c.process.shares_node.pid = true;
         if (c.gvisor) {
           c.gvisor->processes_hidden = false;
           c.gvisor->host_processes = {"4400 sh"};
         }
       },
       [](NodeContainer& c) {
         c.process.shares_node.pid.reset();
         if (c.gvisor) c.gvisor->processes_hidden.reset();
       },
       "the node sees"},
      {"host_namespaces", true, true, [](NodeContainer& c) { c.process.shares_node.net = true; },
       [](NodeContainer& c) { c.process.shares_node.net.reset(); }, "the node's network namespace"},
      {"host_path_mount", true, true,
       [](NodeContainer& c) { c.filesystem.host_paths->push_back("/host-etc"); },
       [](NodeContainer& c) { c.filesystem.host_paths.reset(); }, "/host-etc"},
      {"kubernetes_credentials", true, true,
       [](NodeContainer& c) {
         c.filesystem.service_account_tokens =
             std::vector<std::string>{"/var/run/secrets/kubernetes.io/serviceaccount"};
       },
       [](NodeContainer& c) { c.filesystem.service_account_tokens.reset(); }, "serviceaccount"},
      {"cgroup_interface", true, true, [](NodeContainer& c) { c.filesystem.cgroup_writable = true; },
       [](NodeContainer& c) { c.filesystem.cgroup_writable.reset(); }, "a writable cgroup mount"},
      // Under gVisor a writable cgroup mount is the sentry's own cgroupfs ("emulated"), which
      // the plan accepts: the node agrees either way, so there is no broken row there.
      {"cgroup_mounts", true, false, [](NodeContainer& c) { c.filesystem.cgroup_writable = true; },
       [](NodeContainer& c) { c.filesystem.cgroup_writable.reset(); }, "a writable cgroup mount"},
      {"proc_sys", true, false, [](NodeContainer& c) { c.filesystem.proc_sys_read_only = false; },
       [](NodeContainer& c) { c.filesystem.proc_sys_read_only.reset(); }, "/proc/sys on a writable mount"},
      {"sysrq", true, false, [](NodeContainer& c) { c.filesystem.read_only_paths->clear(); },
       [](NodeContainer& c) { c.filesystem.read_only_paths.reset(); }, "on a writable /proc"},
      {"kallsyms", true, false, [](NodeContainer& c) { c.process.cap_bnd = 1ULL << 34; },
       [](NodeContainer& c) { c.kptr_restrict.reset(); }, "CAP_SYSLOG in CapBnd"},
      {"debugfs", true, false, [](NodeContainer& c) { c.filesystem.debugfs_mounted = true; },
       [](NodeContainer& c) { c.filesystem.debugfs_mounted.reset(); }, "debugfs mounted"},
  };
}

const std::vector<Family>& families() {
  static const std::vector<Family> kFamilies = [] {
    auto all = process_families();
    for (auto& f : filesystem_families()) all.push_back(std::move(f));
    return all;
  }();
  return kFamilies;
}

}  // namespace

TEST_CASE("node rule: a clean sandbox the node agrees with passes every posture check, judged by both",
          "[verify][node]") {
  for (const bool gvisor : {false, true}) {
    const auto view = test::clean_node_view(gvisor);
    const auto checks = judge(gvisor, &view);
    for (const auto& f : families()) {
      INFO((gvisor ? "runsc " : "runc ") << f.control);
      const auto* c = find(checks, f.control);
      REQUIRE(c);
      CHECK(c->status == CheckStatus::pass);
      INFO(c->reason);
      CHECK(has_judge(*c, Judge::posture));
      if (gvisor ? f.runsc : f.runc) CHECK(has_judge(*c, Judge::node));
      // Never silently on the sandbox's word: judged by the node too, or labelled.
      if (!(gvisor ? f.runsc : f.runc))
        CHECK((has_judge(*c, Judge::node) || c->reason.find("node cannot see") != std::string::npos));
    }
  }
}

TEST_CASE("node rule: a node that sees the family broken fails a clean report, naming both sides",
          "[verify][node]") {
  for (const bool gvisor : {false, true}) {
    for (const auto& f : families()) {
      if (!(gvisor ? f.runsc : f.runc)) continue;
      INFO((gvisor ? "runsc " : "runc ") << f.control);
      auto view = test::clean_node_view(gvisor);
      f.breaks(view.containers[0]);
      const auto checks = judge(gvisor, &view);
      const auto* c = find(checks, f.control);
      REQUIRE(c);
      INFO(c->reason);
      CHECK(c->status == CheckStatus::fail);
      CHECK(c->reason.find("the sandbox reports") != std::string::npos);
      CHECK(c->reason.find("the node sees") != std::string::npos);
      CHECK(c->reason.find(f.node_words) != std::string::npos);
      CHECK(c->judges == std::vector<Judge>{Judge::node});
    }
  }
}

TEST_CASE("node rule: a fact the node did not see makes a clean report unwitnessed", "[verify][node]") {
  for (const bool gvisor : {false, true}) {
    for (const auto& f : families()) {
      if (!(gvisor ? f.runsc : f.runc)) continue;
      INFO((gvisor ? "runsc " : "runc ") << f.control);
      auto view = test::clean_node_view(gvisor);
      f.hides(view.containers[0]);
      const auto* c = find(judge(gvisor, &view), f.control);
      REQUIRE(c);
      INFO(c->reason);
      CHECK(c->status == CheckStatus::unwitnessed);
      CHECK(c->judges.empty());
    }
  }
}

TEST_CASE("node rule: no view, an incomplete one or one without the agent's container is unwitnessed",
          "[verify][node]") {
  auto incomplete = test::clean_node_view(false);
  incomplete.complete = false;
  incomplete.note = "cut short";
  auto other = test::clean_node_view(false);
  other.containers[0].service = "db";
  for (const deploy::NodeView* view : std::vector<const deploy::NodeView*>{nullptr, &incomplete, &other}) {
    const auto checks = judge(false, view);
    for (const auto& f : families()) {
      const auto* c = find(checks, f.control);
      REQUIRE(c);
      INFO(f.control << ": " << c->reason);
      CHECK(c->status == CheckStatus::unwitnessed);
    }
  }
}

TEST_CASE("node rule: node_view: none keeps the sandbox's word, marked self-reported", "[verify][node]") {
  const auto checks = judge(false, nullptr, true);
  for (const auto& f : families()) {
    const auto* c = find(checks, f.control);
    REQUIRE(c);
    CHECK(c->status == CheckStatus::pass);
    CHECK(c->self_reported);
    CHECK(c->reason.find("self-reported") != std::string::npos);
  }
}

TEST_CASE("node rule: the sandbox's own failure stands whatever the node says, and the node joins it",
          "[verify][node]") {
  const json expect = plan_expect(false);
  json posture = test::clean_posture(false, "0000000000200000");
  const auto h = host();
  static const std::vector<deploy::EgressTarget> kNone;
  auto view = test::clean_node_view(false);
  const auto agreeing =
      verify::verify_sandbox({expect, posture, h, kNone, policy::Level::strict, nullptr, true, &view});
  CHECK(find(agreeing, "capabilities")->status == CheckStatus::fail);
  CHECK(find(agreeing, "capabilities")->judges == std::vector<Judge>{Judge::posture});
  view.containers[0].process.cap_eff = 0x200000ULL;
  const auto both =
      verify::verify_sandbox({expect, posture, h, kNone, policy::Level::strict, nullptr, true, &view});
  CHECK(find(both, "capabilities")->status == CheckStatus::fail);
  CHECK(find(both, "capabilities")->judges == std::vector<Judge>{Judge::posture, Judge::node});
  const auto none =
      verify::verify_sandbox({expect, posture, h, kNone, policy::Level::strict, nullptr, true, nullptr});
  CHECK(find(none, "capabilities")->status == CheckStatus::fail);
}

TEST_CASE("node rule: what the sandbox tried itself is labelled as its word, never silently",
          "[verify][node]") {
  for (const bool gvisor : {false, true}) {
    const auto view = test::clean_node_view(gvisor);
    const auto checks = judge(gvisor, &view);
    int tries = 0;
    for (const auto& c : checks) {
      const bool tried = c.control == "mount" || c.control == "user_namespace" || c.control == "bpf" ||
                         c.control == "raw_sockets" || c.control == "root_not_writable" ||
                         c.control.rfind("scratch:", 0) == 0;
      if (!tried || c.status != CheckStatus::pass) continue;
      ++tries;
      INFO((gvisor ? "runsc " : "runc ") << c.control << ": " << c.reason);
      CHECK_FALSE(has_judge(c, Judge::node));
      CHECK_THAT(c.reason, Catch::Contains("(node cannot see: ") && Catch::Contains(" the sandbox tried"));
    }
    CHECK(tries >= 3);
    // Without a view these rest on nothing outside either: unwitnessed, like every posture check.
    for (const auto& c : judge(gvisor, nullptr))
      if (c.control == "mount") CHECK(c.status == CheckStatus::unwitnessed);
  }
}
