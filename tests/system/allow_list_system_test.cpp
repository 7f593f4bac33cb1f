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

TEST_CASE("allowDomainsPorts: the listed ports of the allowed name are reached, no other port",
          "[system][run]") {
  test::require_system({"runc", "sshd", "ssh", "ssh-keygen", "nft", "dnsmasq", "ip"});
  test::local::ScratchDir dir;
  auto r = run_command(
      {test::binary_dir() + "/harness/cli/isoharness", "run",
       test::source_dir() + "/tests/fixtures/allow_list/allow-domains-ports.yaml", "--scenarios-dir",
       test::source_dir() + "/scenarios", "--runtimes", "runc", "--out", dir.path},
      RunOptions{.deadline = std::chrono::minutes(8)});
  REQUIRE(r.has_value());
  INFO(r->err.substr(r->err.size() > 4000 ? r->err.size() - 4000 : 0));
  const json result = json::parse(test::read_text(dir.path + "/result.json"));
  REQUIRE(result["sandboxes"].size() == 1);
  const auto checks = checks_of(result["sandboxes"][0]);
  for (const auto& [control, state] : checks) {
    INFO(control << ": " << state.second);
    CHECK(state.first != "fail");
  }
  auto at = [&checks](const char* c) {
    INFO(c);
    REQUIRE(checks.count(c) == 1);
    return checks.at(c);
  };
  // Listed: TCP 8443 answered by the name's own server; UDP 5353 seen arriving by the witness.
  CHECK(at("egress:target-port-8443").first == "pass");
  CHECK(at("egress:target-port-8443").second.find("arrived") == 0);
  CHECK(at("egress:target-port-8443").second.find("connected") != std::string::npos);
  CHECK(at("egress:target-udp-5353").first == "pass");
  CHECK(at("egress:target-udp-5353").second.find("arrived") == 0);
  // Not listed: TCP 8444 (and 22, and UDP 53) of the same name stopped by the node, nothing arriving.
  for (const char* c : {"egress:target-port-unlisted", "egress:target-port-22", "egress:target-udp"}) {
    CHECK(at(c).first == "pass");
    CHECK(at(c).second.find("nothing arrived, stopped") == 0);
  }
  CHECK(r->exit_code == 0);
  CHECK(test::local::leftovers_of("/run/isoharness", result["run"]["id"].get<std::string>()).empty());
}

TEST_CASE("allowDomainsPorts: a world that opens one port more than listed is caught by the witness",
          "[system][selftest]") {
  test::require_system({"runc", "sshd", "ssh-keygen", "nft", "dnsmasq", "ip"});
  test::local::ScratchDir dir;
  auto r = run_command({test::binary_dir() + "/harness/cli/isoharness", "selftest", "--scenarios-dir",
                        test::source_dir() + "/scenarios", "--out", dir.path, "--runtimes", "runc", "--only",
                        "allow_domains_ports_one_more"},
                       RunOptions{.deadline = std::chrono::minutes(8)});
  REQUIRE(r.has_value());
  INFO(r->err.substr(r->err.size() > 4000 ? r->err.size() - 4000 : 0));
  const json result = json::parse(test::read_text(dir.path + "/result.json"));
  const json* cell = nullptr;
  for (const auto& w : result["selftest"]["weakenings"])
    if (w["name"] == "allow_domains_ports_one_more") cell = &w["cells"]["runc"];
  REQUIRE(cell != nullptr);
  INFO(cell->dump());
  CHECK((*cell)["status"] == "caught");
  bool by_unlisted = false;
  for (const auto& c : (*cell)["caught_by"]) by_unlisted = by_unlisted || c == "egress:target-port-unlisted";
  CHECK(by_unlisted);
  // Caught by the witness: the unlisted port's check names the arrival it recorded.
  for (const auto& sb : result["sandboxes"]) {
    if (!sb.contains("weakenings")) continue;
    for (const auto& c : sb["checks"])
      if (c["control"] == "egress:target-port-unlisted") {
        CHECK(c["status"] == "fail");
        CHECK(c["observed"].get<std::string>().find("arrived") == 0);
        CHECK(c.dump().find("witness") != std::string::npos);
      }
  }
  CHECK(r->exit_code == 0);
  CHECK(test::local::leftovers_of("/run/isoharness", result["run"]["id"].get<std::string>()).empty());
}
