// `isoharness check` of a sandbox `isoharness local up` holds, reached only by the ssh line
// it printed: check finds the sandbox in the run's state (deploy/local/up_record.h) and
// judges its posture on this node's view of its containers and its egress on its world's
// witness and drop point, as `run` does; a state directory that does not hold it leaves
// both unwitnessed. And the node agent, `isoharness node-view --container ID`, prints a
// document the reader takes for that sandbox's container, and judges its posture the same
// when check runs it (--node-view PROGRAM). Real runc, sshd, dnsmasq and nftables.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <thread>

#include "harness/common/error.h"
#include "harness/common/subprocess.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/run_state.h"
#include "harness/deploy/node_view.h"
#include "tests/support/test_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
using namespace isoharness::test::local;
namespace dl = isoharness::deploy::local;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

std::string bin() {
  return test::binary_dir() + "/harness/cli/isoharness";
}

const std::string kScenario = "/scenarios/selftest/hardened.yaml";

// An item of selftest's hardened plan (strict, non_root, read_only_root): host_kernel_item
// (runc, with its GPU service) or gvisor_item (runsc), as `isoharness plan` writes it.
json hardened_item(const std::string& task) {
  auto r = run_command({bin(), "plan", test::source_dir() + kScenario, "--format", "json"});
  REQUIRE(r);
  REQUIRE(r->ok());
  const json plan = json::parse(r->out);
  for (const auto& item : plan["items"])
    if (item["id"].get<std::string>().rfind(task + "/", 0) == 0) return item;
  FAIL("no " << task << " item in " << kScenario);
  return {};
}

// `local up` of one item's values, torn down (and checked for leftovers) when it goes.
struct Up {
  ScratchDir dir;
  pid_t pid = -1;
  std::string run_id = "c" + dl::new_run_id().substr(0, 7);
  json info;

  explicit Up(const json& values) {
    make_login_key(dir.path);
    std::ofstream(dir.path + "/values.json") << values.dump();
    auto started = spawn_detached({bin(), "local", "up", "--values", dir.path + "/values.json", "--run-id",
                                   run_id, "--authorized-key", dir.path + "/id_ed25519.pub", "--identity",
                                   dir.path + "/id_ed25519", "--json", "--hold-seconds", "600"},
                                  dir.path + "/up.log");
    REQUIRE(started);
    pid = *started;
    for (int i = 0; i < 1800 && info.is_null(); ++i) {  // at most 180 s
      std::string text = log();
      for (std::istringstream in(text); std::getline(in, text);)
        if (text.rfind('{', 0) == 0) info = json::parse(text);
      int status = 0;
      if (info.is_null() && ::waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return;
      }
      std::this_thread::sleep_for(100ms);
    }
  }
  ~Up() {
    if (pid > 0) terminate_process(pid, 60000ms);
    CHECK(leftovers_of(dl::kDefaultStateRoot, run_id).empty());
  }
  std::string log() const { return dl::read_file_bounded(dir.path + "/up.log"); }
};

struct Checked {
  int exit_code = -1;
  std::string log;
  json sandbox;
};

Checked check(const Up& up, const json& item, const std::string& out, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {bin(),
                                   "check",
                                   test::source_dir() + kScenario,
                                   "--item",
                                   item["id"].get<std::string>(),
                                   "--ssh",
                                   up.info["ssh_command"].get<std::string>(),
                                   "--out",
                                   out,
                                   "--isoprobe-bundle",
                                   test::binary_dir() + "/probes/isoprobe-bundle",
                                   "--deployment",
                                   test::source_dir() + "/scenarios/deployments/local.yaml"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto r = run_command(argv, {.deadline = 600s, .merge_stderr = true});
  REQUIRE(r);
  Checked c{r->exit_code, r->out, {}};
  const json result = json::parse(test::read_text(out + "/result.json"));
  REQUIRE(result["sandboxes"].size() == 1);
  c.sandbox = result["sandboxes"][0];
  return c;
}

const json* check_of(const json& sandbox, const std::string& control) {
  for (const auto& c : sandbox["checks"])
    if (c["control"] == control) return &c;
  return nullptr;
}

bool judged_by(const json& check, const char* judge) {
  for (const auto& j : check["judges"])
    if (j == judge) return true;
  return false;
}

const std::vector<std::string> kPosture = {"capabilities",
                                           "capability_bounding",
                                           "capability:CAP_SYS_ADMIN",
                                           "no_new_privs",
                                           "seccomp",
                                           "uid",
                                           "root_filesystem",
                                           "host_devices",
                                           "runtime_socket",
                                           "pid_namespace",
                                           "host_namespaces",
                                           "host_path_mount",
                                           "kubernetes_credentials",
                                           "cgroup_mounts",
                                           "proc_sys"};

}  // namespace

TEST_CASE("check of a local up sandbox: its posture is judged by the node, found from the run's state",
          "[system][local][check]") {
  test::require_system({"runc", "runsc", "sshd", "ssh", "ssh-keygen", "nft", "dnsmasq", "ip", "nsenter"});
  const json item = hardened_item("host_kernel_item");
  Up up(item["values"]);
  INFO(up.log());
  REQUIRE(up.info.is_object());
  CHECK(up.info["facts"]["runtime"] == "runc");

  const Checked judged = check(up, item, up.dir.path + "/out", {});
  INFO(judged.log);
  CHECK_THAT(judged.log, Catch::Contains("of `local up` run " + up.run_id));
  CHECK(judged.exit_code == kExitPass);
  REQUIRE(judged.sandbox.contains("node_view"));
  for (const auto& control : kPosture) {
    INFO(control);
    const json* c = check_of(judged.sandbox, control);
    REQUIRE(c != nullptr);
    INFO(c->dump());
    CHECK((*c)["status"] == "pass");
    CHECK(judged_by(*c, "node"));
  }
  int egress = 0;
  for (const auto& c : judged.sandbox["checks"]) {
    if (c["control"].get<std::string>().rfind("egress:", 0) != 0 || c["status"] == "n/a") continue;
    INFO(c.dump());
    ++egress;
    CHECK(c["status"] == "pass");
    CHECK((judged_by(c, "witness") || judged_by(c, "drop point")));
    CHECK_FALSE(c.value("self_reported", false));
  }
  CHECK(egress > 5);

  // Not found in the state directory named: no node view is guessed, the posture is unwitnessed.
  ScratchDir empty;
  const Checked unfound = check(up, item, up.dir.path + "/out2", {"--local-state-dir", empty.path});
  INFO(unfound.log);
  CHECK_THAT(unfound.log, Catch::Contains("no live `local up` run"));
  CHECK(unfound.exit_code == kExitInfrastructure);
  const json* caps = check_of(unfound.sandbox, "capabilities");
  REQUIRE(caps != nullptr);
  CHECK((*caps)["status"] == "unwitnessed");
  CHECK_FALSE(unfound.sandbox.contains("node_view"));

  // The node agent as check runs it (--node-view PROGRAM): the same posture verdicts.
  const Checked agent_judged =
      check(up, item, up.dir.path + "/out3",
            {"--local-state-dir", empty.path, "--node-view", bin(), "--node-view-arg", "node-view",
             "--node-view-arg", "--container", "--node-view-arg", dl::container_id(up.run_id, "manual")});
  INFO(agent_judged.log);
  REQUIRE(agent_judged.sandbox.contains("node_view"));
  CHECK_THAT(agent_judged.sandbox["node_view"]["witness"].get<std::string>(), Catch::Contains("node agent"));
  for (const auto& control : kPosture) {
    INFO(control);
    const json* c = check_of(agent_judged.sandbox, control);
    REQUIRE(c != nullptr);
    CHECK((*c)["status"] == "pass");
    CHECK(judged_by(*c, "node"));
  }

  // The node agent on the sandbox's container: a document the reader takes.
  auto r = run_command({bin(), "node-view", "--container", dl::container_id(up.run_id, "manual")},
                       {.deadline = 60s});
  REQUIRE(r);
  INFO(r->err);
  CHECK(r->exit_code == kExitPass);
  const deploy::NodeViewRead read = deploy::read_node_view(r->out);
  INFO(read.error);
  REQUIRE(read.view);
  CHECK(read.view->complete);
  const deploy::NodeContainer* agent = deploy::node_container(*read.view);
  REQUIRE(agent != nullptr);
  CHECK(agent->runtime == deploy::NodeRuntime::runc);
  CHECK(agent->init_pid.has_value());
  CHECK(agent->process.cap_eff.has_value());
  CHECK(agent->filesystem.root_read_only == true);
  CHECK_THAT(read.view->witness, Catch::Contains("node agent"));
}

TEST_CASE("check of a local up gVisor sandbox: the node judges it from runsc's state and spec",
          "[system][local][check]") {
  test::require_system({"runc", "runsc", "sshd", "ssh", "ssh-keygen", "nft", "dnsmasq", "ip", "nsenter"});
  const json item = hardened_item("gvisor_item");
  Up up(item["values"]);
  INFO(up.log());
  REQUIRE(up.info.is_object());
  CHECK(up.info["facts"]["runtime"] == "runsc");

  const Checked judged = check(up, item, up.dir.path + "/out", {});
  INFO(judged.log);
  CHECK(judged.exit_code == kExitPass);
  REQUIRE(judged.sandbox.contains("node_view"));
  for (const char* control : {"kernel", "capabilities", "no_new_privs", "uid", "root_filesystem",
                              "host_devices", "runtime_socket", "host_path_mount"}) {
    INFO(control);
    const json* c = check_of(judged.sandbox, control);
    REQUIRE(c != nullptr);
    INFO(c->dump());
    CHECK((*c)["status"] == "pass");
    CHECK(judged_by(*c, "node"));
  }

  auto r = run_command(
      {bin(), "node-view", "--runtime", "runsc", "--container", dl::container_id(up.run_id, "manual")},
      {.deadline = 60s});
  REQUIRE(r);
  INFO(r->err);
  CHECK(r->exit_code == kExitPass);
  const deploy::NodeViewRead read = deploy::read_node_view(r->out);
  REQUIRE(read.view);
  const deploy::NodeContainer* agent = deploy::node_container(*read.view);
  REQUIRE(agent != nullptr);
  CHECK(agent->runtime == deploy::NodeRuntime::runsc);
  CHECK(agent->source == "spec");
  REQUIRE(agent->gvisor.has_value());
  CHECK(agent->gvisor->processes_hidden == true);
  // Asked of runc alone, runsc's container is not found: exit 3, nothing printed.
  auto runc_only = run_command(
      {bin(), "node-view", "--runtime", "runc", "--container", dl::container_id(up.run_id, "manual")},
      {.deadline = 60s});
  REQUIRE(runc_only);
  CHECK(runc_only->exit_code == kExitInfrastructure);
  CHECK(runc_only->out.empty());
}
