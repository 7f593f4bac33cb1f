// The escape classes end to end (docs/SECURITY.md, "Escape classes"): `isoharness local up`
// deploys a strict item's values with one escape added (SYS_MODULE, DAC_READ_SEARCH, a
// read-only host directory), and `isoharness check` against that strict item fails it
// with a reason naming the class; `privileged: true`, and CAP_BPF under gVisor, are
// refused by `local up` naming the control. Real runc, runsc, sshd and nftables.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "harness/common/subprocess.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/run_state.h"
#include "tests/support/test_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
using namespace isoharness::test::local;
namespace dl = isoharness::deploy::local;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

std::string escape_bin() {
  return test::binary_dir() + "/harness/cli/isoharness";
}

std::string escape_scenario(const std::string& name) {
  return test::source_dir() + "/scenarios/" + name;
}

// The one item of a scenario, as `isoharness plan` writes it.
json escape_item(const std::string& scenario) {
  auto r = run_command({escape_bin(), "plan", escape_scenario(scenario), "--format", "json"});
  REQUIRE(r);
  REQUIRE(r->ok());
  return json::parse(r->out)["items"][0];
}

// `local up` of some values, held until the object goes; `info` is its JSON line, or null
// when it exited first (then `exit_code` and the log say why).
struct EscapeUp {
  ScratchDir dir;
  pid_t pid = -1;
  std::string run_id = "e" + dl::new_run_id().substr(0, 7);
  json info;
  int exit_code = -1;

  explicit EscapeUp(const json& values) {
    test::require_system({"runc", "runsc", "sshd", "ssh", "ssh-keygen", "nft", "dnsmasq", "ip", "nsenter"});
    make_login_key(dir.path);
    std::ofstream(dir.path + "/values.json") << values.dump();
    auto started = spawn_detached({escape_bin(), "local", "up", "--values", dir.path + "/values.json",
                                   "--run-id", run_id, "--authorized-key", dir.path + "/id_ed25519.pub",
                                   "--identity", dir.path + "/id_ed25519", "--json", "--hold-seconds", "600"},
                                  dir.path + "/up.log");
    REQUIRE(started);
    pid = *started;
    for (int i = 0; i < 1800 && info.is_null(); ++i) {  // at most 180 s
      std::string text = log();
      for (std::istringstream in(text); std::getline(in, text);)
        if (text.rfind('{', 0) == 0) info = json::parse(text);
      int status = 0;
      if (info.is_null() && ::waitpid(pid, &status, WNOHANG) == pid) {
        exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        pid = -1;
        return;
      }
      std::this_thread::sleep_for(100ms);
    }
  }
  ~EscapeUp() {
    if (pid > 0) terminate_process(pid, 60000ms);
    CHECK(leftovers_of(dl::kDefaultStateRoot, run_id).empty());
  }
  std::string log() const { return dl::read_file_bounded(dir.path + "/up.log"); }
};

// `isoharness check` of the sandbox against the item; the failing checks by control.
std::map<std::string, json> check_failures(const EscapeUp& up, const std::string& scenario,
                                           const json& item) {
  const std::string out = up.dir.path + "/out";
  auto r =
      run_command({escape_bin(), "check", escape_scenario(scenario), "--item", item["id"].get<std::string>(),
                   "--ssh", up.info["ssh_command"].get<std::string>(), "--out", out, "--isoprobe-bundle",
                   test::binary_dir() + "/probes/isoprobe-bundle",
                   // nothing witnesses a sandbox reached by its ssh line: said, not assumed
                   "--deployment", test::source_dir() + "/tests/fixtures/deployments/check-no-witness.yaml"},
                  {.deadline = 600s, .merge_stderr = true});
  REQUIRE(r);
  INFO(r->out);
  CHECK(r->exit_code == 1);
  std::map<std::string, json> failed;
  const json result = json::parse(test::read_text(out + "/result.json"));
  for (const auto& s : result["sandboxes"])
    for (const auto& c : s["checks"])
      if (c["status"] == "fail") failed[c["control"].get<std::string>()] = c;
  return failed;
}

json& default_context(json& values) {
  return values["services"]["default"]["securityContext"];
}

}  // namespace

TEST_CASE(
    "local up with SYS_MODULE, DAC_READ_SEARCH and a read-only host directory: check fails each, naming "
    "the class",
    "[system][escape]") {
  // gpu-strict's item runs on the node's runtime (runc): the host kernel, where these matter.
  const json item = escape_item("gpu-strict.yaml");
  json values = item["values"];
  default_context(values)["capabilities"] = {{"drop", {"ALL"}}, {"add", {"SYS_MODULE", "DAC_READ_SEARCH"}}};
  auto& svc = values["services"]["default"];
  svc["volumes"].push_back(
      {{"name", "node-data"},
       {"hostPath",
        {{"path", "/var/lib/isoharness/host-paths/escape-test"}, {"type", "DirectoryOrCreate"}}}});
  svc["volumeMounts"].push_back({{"name", "node-data"}, {"mountPath", "/node-data"}, {"readOnly", true}});
  // A file of the host directory's own, which the sandbox's teardown must leave where it is
  // (the bundle holds the directory's staging bind until then).
  const std::string marker = "/var/lib/isoharness/host-paths/escape-test/marker-" + dl::new_run_id();
  std::filesystem::create_directories("/var/lib/isoharness/host-paths/escape-test");
  std::ofstream(marker) << "host";
  struct MarkerGone {
    std::string path;
    ~MarkerGone() {
      CHECK(dl::read_file_bounded(path) == "host");
      std::filesystem::remove(path);
    }
  } marker_kept{marker};
  EscapeUp up(values);
  INFO(up.log());
  REQUIRE(up.info.is_object());
  CHECK(up.info["facts"]["runtime"] == "runc");
  const auto failed = check_failures(up, "gpu-strict.yaml", item);
  for (const auto& [control, c] : failed) UNSCOPED_INFO(control << ": " << c["reason"]);
  REQUIRE(failed.count("capability:CAP_SYS_MODULE"));
  CHECK_THAT(failed.at("capability:CAP_SYS_MODULE")["reason"].get<std::string>(),
             Catch::Contains("escape class: dangerous capabilities") && Catch::Contains("kernel modules"));
  REQUIRE(failed.count("capability:CAP_DAC_READ_SEARCH"));
  CHECK_THAT(failed.at("capability:CAP_DAC_READ_SEARCH")["reason"].get<std::string>(),
             Catch::Contains("escape class: dangerous capabilities") && Catch::Contains("open_by_handle_at"));
  REQUIRE(failed.count("host_path_mount"));
  CHECK_THAT(failed.at("host_path_mount")["reason"].get<std::string>(),
             Catch::Contains("escape class: host path mount") && Catch::Contains("/node-data") &&
                 Catch::Contains("read-only"));
}

TEST_CASE("local up refuses privileged: true, and CAP_BPF under gVisor, naming the control",
          "[system][escape]") {
  const json item = escape_item("strict.yaml");
  SECTION("privileged") {
    json values = item["values"];
    default_context(values)["privileged"] = true;
    EscapeUp up(values);
    CHECK(up.info.is_null());
    CHECK(up.exit_code == 3);
    CHECK_THAT(up.log(), Catch::Contains("securityContext.privileged") &&
                             Catch::Contains("never starts a privileged container"));
  }
  SECTION("CAP_BPF under gVisor") {
    json values = item["values"];
    default_context(values)["capabilities"] = {{"drop", {"ALL"}}, {"add", {"BPF"}}};
    EscapeUp up(values);
    CHECK(up.info.is_null());
    CHECK(up.exit_code == 3);
    CHECK_THAT(up.log(), Catch::Contains("securityContext.capabilities.add") && Catch::Contains("CAP_BPF") &&
                             Catch::Contains("runsc"));
  }
}
