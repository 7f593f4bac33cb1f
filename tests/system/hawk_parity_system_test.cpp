// `isoharness parity --backend hawk` end to end: the real binary drives the stand-in hawk
// CLI (tests/hawk_standin/hawk), which schedules each cell's sandbox by the nodeSelector
// the profile's node class asks for onto a local node class (its CPU set), and starts it
// with `isoharness local up`. Checked: every cell timed through the platform, each on the
// node class it asked for, the gVisor getpid ratio close to a local run's, the run in the
// history with the deployment's context; and a cell the platform will not deploy, named
// with the platform's words and compared with nothing.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "harness/common/subprocess.h"
#include "harness/deploy/local/run_state.h"
#include "tests/support/test_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
using namespace isoharness::test::local;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

std::string isoharness_bin() {
  return test::binary_dir() + "/harness/cli/isoharness";
}
std::string source(const std::string& path) {
  return test::source_dir() + "/" + path;
}

// The stand-in's nodes: one per local node class, labelled; non-tier also tainted, so only
// a pod that tolerates the taint lands there.
const std::map<std::string, std::string> kNodes = {
    {"HAWK_STANDIN_NODE_LABELS",
     R"({"tier": {"example.com/pool": "tier"}, "non-tier": {"example.com/pool": "general"}})"},
    {"HAWK_STANDIN_NODE_TAINTS",
     R"({"non-tier": [{"key": "pool", "value": "general", "effect": "NoSchedule"}]})"}};

// A platform with node pools, and a profile whose node classes ask for them by label. The
// CLI environment names no node class: the placement alone decides where a cell lands.
struct Pools {
  ScratchDir dir;
  std::string state = dir.path + "/standin";
  std::string profile = dir.path + "/pools.yaml";
  std::map<std::string, std::string> env_extra;

  explicit Pools(int start_timeout_s) {
    test::require_system({"runc", "runsc", "sshd", "ssh", "ssh-keygen", "nft", "dnsmasq", "ip", "python3"});
    auto r = run_command({source("tests/hawk_standin/hawk"), "human", "register", "--name", "alice",
                          "--ssh-key", make_login_key(dir.path)},
                         {.env_set = env()});
    REQUIRE(r);
    REQUIRE(r->ok());
    std::ofstream f(profile);
    // Parity times workloads and judges no egress; the drop point is the stand-in's Hubble all
    // the same, as on every stand-in profile.
    f << "name: pools\nbackend: hawk\nruntime_classes: [gvisor]\nsandbox_runtime_class: gvisor\n"
      << "hubble: { command: [" << source("tests/hawk_standin/hawk") << ", hubble, observe, --output, json], "
      << "lead_s: 600 }\n"
         "sandbox_runtime_class_is_default: false\nnode_mounts: [/usr, /etc/alternatives]\nhawk:\n  cli: "
      << source("tests/hawk_standin/hawk") << "\n  human: alice\n  identity_file: " << dir.path
      << "/id_ed25519\n  sandbox_host_keys: first-use\n  start_timeout_s: " << start_timeout_s
      << "\nnode_classes:\n"
         "  tier: { node_selector: { example.com/pool: tier } }\n"
         "  non-tier:\n    node_selector: { example.com/pool: general }\n"
         "    tolerations: [ { key: pool, operator: Equal, value: general, effect: NoSchedule } ]\n"
         "  gpu: { node_selector: { example.com/pool: gpu } }\n";
  }
  std::map<std::string, std::string> env() const {
    std::map<std::string, std::string> e = {
        {"HAWK_STANDIN_STATE", state},
        {"HAWK_STANDIN_ISOHARNESS", isoharness_bin()},
        {"HAWK_STANDIN_PROFILE", source("scenarios/deployments/local.yaml")}};
    e.insert(kNodes.begin(), kNodes.end());
    for (const auto& [k, v] : env_extra) e[k] = v;
    return e;
  }
  RunResult parity(const std::string& out, const std::vector<std::string>& extra) const {
    std::vector<std::string> argv = {isoharness_bin(),
                                     "parity",
                                     "--backend",
                                     "hawk",
                                     "--deployment",
                                     profile,
                                     "--scenarios-dir",
                                     source("scenarios"),
                                     "--quick",
                                     "--out",
                                     out,
                                     "--isoprobe-bundle",
                                     test::binary_dir() + "/probes/isoprobe-bundle",
                                     "--accept-new-host-keys"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto r = run_command(argv, {.deadline = 900s, .env_set = env(), .merge_stderr = true});
    REQUIRE(r);
    return *r;
  }
  // Every eval the stand-in started deleted, and its `local up` run gone from the machine.
  void require_nothing_left() const {
    std::ifstream in(state + "/events.jsonl");
    std::map<std::string, std::pair<std::string, bool>> evals;
    for (std::string line; std::getline(in, line);) {
      json e = json::parse(line);
      if (e["event"] == "start") evals[e["id"]] = {e["run_id"], false};
      if (e["event"] == "delete") evals[e["id"]].second = true;
    }
    CHECK_FALSE(evals.empty());
    for (const auto& [id, e] : evals) {
      INFO("eval " << id);
      CHECK(e.second);
      CHECK(leftovers_of(deploy::local::kDefaultStateRoot, e.first).empty());
    }
  }
};

const json* comparison(const json& section, const std::string& cell, const std::string& workload) {
  for (const auto& c : section["cells"])
    if (c["name"] == cell)
      for (const auto& w : c["comparisons"])
        if (w["workload"] == workload) return &w;
  return nullptr;
}

double getpid_ratio(const json& section, const std::string& cell) {
  const json* c = comparison(section, cell, "getpid");
  REQUIRE(c != nullptr);
  return (*c)["ratio"]["estimate"].get<double>();
}

}  // namespace

TEST_CASE("parity --backend hawk: every cell timed through the platform, on the nodes it asked for",
          "[system][hawk][parity]") {
  Pools p(300);
  const std::string out = p.dir.path + "/hawk";
  RunResult r = p.parity(out, {"--workloads", "getpid,cpu_hash,ssh_rtt"});
  INFO(r.out);
  // getpid weighs 0 and cpu_hash and ssh_rtt are close to 1: parity, or on a loaded
  // machine a regression verdict (1); never a run that could not be made. Whichever it is,
  // the exit code, the summary's verdict and the cells' mix verdicts must say the same.
  CHECK((r.exit_code == 0 || r.exit_code == 1));
  const json result = json::parse(test::read_text(out + "/result.json"));
  bool regression = false;
  for (const auto& c : result["parity"]["cells"])
    regression = regression || (c.contains("mix") && c["mix"].value("verdict", "") == "regression");
  INFO("summary " << result["summary"].dump());
  CHECK(result["summary"]["verdict"] == (r.exit_code == 0 ? "pass" : "fail"));
  CHECK(regression == (r.exit_code == 1));
  CHECK(result["context"]["backend"] == "hawk");
  CHECK(result["context"]["profile"] == "pools");
  CHECK(result["context"]["node_classes"]["non-tier"]["node_selector"]["example.com/pool"] == "general");
  const json& section = result["parity"];
  REQUIRE(section.is_object());
  CHECK(section["rounds"] == 5);
  CHECK(section["cells_not_deployed"].empty());
  std::set<std::string> cells;
  std::map<std::string, std::string> cpus;
  std::map<std::string, int> gvisor_cpus;
  for (const auto& c : section["cell_details"]) {
    const std::string cell = c["cell"], node_class = c["node_class"];
    INFO(cell);
    cells.insert(cell);
    CHECK(c["facts"]["backend"] == "hawk");
    // The stand-in scheduled the cell by its selector onto the local node class of that name.
    INFO(c["node"].dump());
    CHECK(c["node"]["node_name"] == "standin-" + node_class);
    CHECK(c["node"]["cpu_model"].is_string());
    CHECK(c["node"]["kernel"].is_string());
    CHECK(result["context"]["sandbox_kernels"][cell] == c["node"]["kernel"]);
    // Under runc the sandbox sees the node's boot id and its CPU set. gVisor shows neither
    // (no boot_id file, no Cpus_allowed_list, CPU model "unknown"), but sizes its vCPUs to
    // the CPU set, so its /proc/cpuinfo lists as many processors as the class has CPUs.
    if (c["runtime"] == "runc") {
      CHECK(c["node"]["boot_id"].is_string());
      cpus[node_class] =
          c["node"]["cpus_allowed"].is_string() ? c["node"]["cpus_allowed"].get<std::string>() : "";
    } else {
      gvisor_cpus[node_class] =
          c["node"]["cpus_listed"].is_number() ? c["node"]["cpus_listed"].get<int>() : 0;
    }
  }
  CHECK(cells == std::set<std::string>{"runc/tier", "runc/non-tier", "gvisor/tier", "gvisor/non-tier"});
  CHECK(cpus["tier"] == "1");  // scenarios/deployments/local.yaml: tier is CPU 1, non-tier 0-1
  CHECK(cpus["non-tier"] == "0-1");
  CHECK(gvisor_cpus["tier"] == 1);
  CHECK(gvisor_cpus["non-tier"] == 2);
  for (const char* cell : {"runc/non-tier", "gvisor/tier", "gvisor/non-tier"})
    CHECK(comparison(section, cell, "cpu_hash") != nullptr);

  {  // the gVisor getpid ratio is in the range of a local run's; the run is in the history
    const std::string local_out = p.dir.path + "/local";
    auto local = run_command({isoharness_bin(), "parity", "--scenarios-dir", source("scenarios"), "--quick",
                              "--candidate", "gvisor/tier", "--workloads", "getpid", "--out", local_out},
                             {.deadline = 600s, .merge_stderr = true});
    REQUIRE(local);
    INFO(local->out);
    const json local_section = json::parse(test::read_text(local_out + "/result.json"))["parity"];
    const double here = getpid_ratio(local_section, "gvisor/tier");
    const double there = getpid_ratio(section, "gvisor/tier");
    INFO("gvisor/tier getpid ratio: local " << here << ", through the platform " << there);
    CHECK(here > 1.5);  // a syscall costs more under gVisor, whichever way it is reached
    CHECK(there > here / 3);
    CHECK(there < here * 3);

    const std::string db = p.dir.path + "/history.sqlite";
    auto rec = run_command({isoharness_bin(), "history", "--db", db, "record", out + "/result.json"});
    REQUIRE(rec);
    INFO(rec->out << rec->err);
    REQUIRE(rec->exit_code == 0);
    auto show = run_command({isoharness_bin(), "history", "--db", db, "show",
                             result["run"]["id"].get<std::string>(), "--format", "json"});
    REQUIRE(show);
    INFO(show->err);
    REQUIRE(show->exit_code == 0);
    const json shown = json::parse(show->out);
    CHECK(shown.dump().find("\"backend\":\"hawk\"") != std::string::npos);
    CHECK(shown.dump().find("gvisor/non-tier") != std::string::npos);
  }
  p.require_nothing_left();
}

TEST_CASE("parity --backend hawk: a cell the platform will not deploy is named, and compared with nothing",
          "[system][hawk][parity]") {
  Pools p(40);
  p.env_extra["HAWK_STANDIN_RUNTIME_CLASSES"] = "";  // this platform offers no gVisor class
  const std::string out = p.dir.path + "/out";
  RunResult r = p.parity(out, {"--candidate", "gvisor/tier", "--candidate", "runc/gpu", "--candidate",
                               "runc/non-tier", "--workloads", "cpu_hash"});
  INFO(r.out);
  CHECK(r.exit_code == 3);
  // Each by name, with what the platform said: a refusal at submission, a pod never scheduled.
  CHECK_THAT(r.out, Catch::Contains("cell gvisor/tier could not be deployed") &&
                        Catch::Contains("runtime class 'gvisor' is not offered by this deployment"));
  CHECK_THAT(r.out, Catch::Contains("cell runc/gpu could not be deployed") &&
                        Catch::Contains("FailedScheduling") && Catch::Contains("0/2 nodes are available"));
  const json result = json::parse(test::read_text(out + "/result.json"));
  CHECK(result["summary"]["verdict"] == "error");
  const json& section = result["parity"];
  REQUIRE(section.is_object());
  std::set<std::string> missing;
  for (const auto& c : section["cells_not_deployed"]) missing.insert(c["cell"].get<std::string>());
  CHECK(missing == std::set<std::string>{"gvisor/tier", "runc/gpu"});
  CHECK(comparison(section, "gvisor/tier", "cpu_hash") == nullptr);
  CHECK(comparison(section, "runc/gpu", "cpu_hash") == nullptr);
  CHECK(comparison(section, "runc/non-tier", "cpu_hash") != nullptr);  // the cells that came up are timed
  p.require_nothing_left();
}
