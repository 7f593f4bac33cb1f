// `isoharness run` on a scenario that lists a domain and a CIDR, under runc and gVisor: the
// local world enforces the chart's scope (TCP 80/443 to the listed name only, its name
// checked by the node's proxy; every port of the CIDR), and every scope check passes with
// the observations that prove it.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>

#include "harness/common/subprocess.h"
#include "tests/support/test_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// control -> {status, observed} of one sandbox.
std::map<std::string, std::pair<std::string, std::string>> checks_of(const json& sandbox) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  for (const auto& c : sandbox["checks"])
    out[c["control"].get<std::string>()] = {c["status"].get<std::string>(), c["observed"].get<std::string>()};
  return out;
}

}  // namespace

TEST_CASE("allow list scope: the listed name on 80/443 only, the CIDR on every port, metadata never",
          "[system][run]") {
  test::require_system({"runc", "runsc", "sshd", "ssh", "ssh-keygen", "nft", "dnsmasq", "ip"});
  test::local::ScratchDir dir;
  const std::string scenarios = test::source_dir() + "/scenarios";
  auto r = run_command({test::binary_dir() + "/harness/cli/isoharness", "run",
                        test::source_dir() + "/tests/fixtures/allow_list/allow-list-scope.yaml",
                        "--scenarios-dir", scenarios, "--runtimes", "runc,gvisor", "--out", dir.path},
                       RunOptions{.deadline = std::chrono::minutes(10)});
  REQUIRE(r.has_value());
  INFO(r->err.substr(r->err.size() > 4000 ? r->err.size() - 4000 : 0));
  const json result = json::parse(test::read_text(dir.path + "/result.json"));
  std::set<std::string> runtimes;
  for (const auto& s : result["sandboxes"]) {
    runtimes.insert(s["runtime"].get<std::string>());
    INFO(s["runtime"].get<std::string>());
    const auto checks = checks_of(s);
    for (const auto& [control, state] : checks) {
      INFO(control << ": " << state.second);
      CHECK(state.first != "fail");
    }
    // Reachable: the name itself on 80 and 443 (through the node's proxy), the CIDR host's 8443.
    for (const char* c :
         {"egress:target", "egress:target-tls", "egress:target-sni", "egress:cidr-host-port"}) {
      INFO(c);
      REQUIRE(checks.count(c) == 1);
      CHECK(checks.at(c).first == "pass");
      CHECK(checks.at(c).second.find("connected") != std::string::npos);
    }
    // Blocked: a fronted name reset by the proxy, port 22 and UDP dropped by the node, metadata;
    // each stopped on the drop point's record with nothing arriving.
    for (const char* c : {"egress:target-sni-fronted", "egress:target-host-fronted"}) {
      INFO(c);
      REQUIRE(checks.count(c) == 1);
      CHECK(checks.at(c).first == "pass");
      CHECK(checks.at(c).second.find("reset") != std::string::npos);
      CHECK(checks.at(c).second.find("nothing arrived, stopped") == 0);  // the proxy's reset, named
    }
    for (const char* c : {"egress:target-port-22", "egress:target-udp", "egress:metadata",
                          "egress:metadata-google", "egress:metadata-imds-token"}) {
      INFO(c);
      REQUIRE(checks.count(c) == 1);
      CHECK(checks.at(c).first == "pass");
      CHECK(checks.at(c).second.find("nothing arrived, stopped") == 0);
    }
  }
  CHECK(runtimes == std::set<std::string>{"runc", "gvisor"});
  CHECK(r->exit_code == 0);
  CHECK(test::local::leftovers_of("/run/isoharness", result["run"]["id"].get<std::string>()).empty());
}
