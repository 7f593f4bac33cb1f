// The posture document's schema check and the bounded parse: a document isoprobe cannot
// have written (off-schema, duplicated, self-contradicting, too deep) gets no passing check.
#include <catch2/catch.hpp>

#include "harness/verify/checks_internal.h"
#include "harness/verify/verify.h"
#include "tests/support/test_support.h"

using namespace isoharness;
using nlohmann::json;

namespace {

// A document isoprobe wrote on this kind of machine (tests/fixtures/verify/).
json real_posture() {
  return json::parse(test::read_text(test::source_dir() + "/tests/fixtures/verify/posture_host.json"));
}

json& observation(json& posture, const std::string& name) {
  for (auto& o : posture["observations"])
    if (o["name"] == name) return o;
  FAIL("no observation " << name);
  throw std::logic_error("unreachable");
}

// What a plan asks of a standard runc item: everything the real document shows passes.
json lenient_expect() {
  return {{"kernel", "host"}, {"cap_eff", nullptr}, {"uid", nullptr}, {"root_writable", true}};
}

std::vector<verify::CheckResult> run(const json& posture) {
  verify::HostFacts host;
  host.boot_id = "another-machine";
  std::vector<deploy::EgressTarget> targets;
  return verify::verify_sandbox(
      {lenient_expect(), posture, host, targets, policy::Level::standard, nullptr, false, nullptr, true});
}

int passes(const std::vector<verify::CheckResult>& checks) {
  int n = 0;
  for (const auto& c : checks) n += c.status == isoharness::CheckStatus::pass ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("a document isoprobe wrote has no schema problems", "[verify]") {
  json p = real_posture();
  CHECK(verify::posture_schema_problems(p).empty());
  CHECK(passes(run(p)) > 0);  // the baseline the forged variants below lose
}

TEST_CASE("forged or self-contradicting posture documents get no passing check", "[verify]") {
  struct Case {
    const char* what;
    std::function<void(json&)> forge;
    const char* problem;
  };
  const std::vector<Case> cases = {
      {"its own verdict",
       [](json& p) {
         p["checks"] = {{{"control", "capabilities"}, {"status", "pass"}}};
       },
       "unknown top-level key 'checks'"},
      {"wrong schema", [](json& p) { p["schema"] = "isoharness.posture/v0"; }, "schema is not"},
      {"an observation twice",
       [](json& p) {
         json again = observation(p, "capabilities");
         p["observations"].insert(p["observations"].begin(), again);
       },
       "a second 'capabilities' observation"},
      {"names that contradict the mask",
       [](json& p) { observation(p, "capabilities")["value"]["eff_names"] = json::array(); },
       "eff_names do not match eff"},
      {"CapEff outside CapPrm",
       [](json& p) {
         auto& v = observation(p, "capabilities")["value"];
         v["prm"] = "0000000000000000";
         v["eff"] = "0000000000200000";
         v["eff_names"] = {"CAP_SYS_ADMIN"};
       },
       "eff holds bits that prm does not"},
      {"gVisor without its signals",
       [](json& p) {
         auto& v = observation(p, "kernel")["value"];
         v["gvisor"] = true;
         v["gvisor_signals"] = json::array();
       },
       "gvisor is true without the signals"},
      {"an unknown status", [](json& p) { observation(p, "seccomp")["status"] = "pass"; },
       "seccomp: status must be ok, error or skipped"},
      {"a mistyped value", [](json& p) { observation(p, "identity")["value"]["uid"] = "1000"; },
       "identity: 'uid' has the wrong type"},
      {"evidence past isoprobe's bound",
       [](json& p) { observation(p, "kernel")["evidence"] = std::string(5000, 'x'); },
       "kernel: evidence is not a string of at most 4096 bytes"},
      {"an unknown observation",
       [](json& p) {
         p["observations"].push_back({{"name", "verdict"}, {"status", "ok"}, {"value", "pass"}});
       },
       "unknown observation 'verdict'"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    json p = real_posture();
    c.forge(p);
    auto problems = verify::posture_schema_problems(p);
    REQUIRE_FALSE(problems.empty());
    bool named = false;
    for (const auto& pr : problems) named = named || pr.find(c.problem) != std::string::npos;
    CHECK(named);
    auto checks = run(p);
    CHECK(passes(checks) == 0);
    REQUIRE_FALSE(checks.empty());
    CHECK(checks.front().control == "posture_schema");
    CHECK(checks.front().status == isoharness::CheckStatus::fail);
  }
}

TEST_CASE("parse_posture bounds depth and refuses what is not a JSON object", "[verify]") {
  CHECK(
      verify::parse_posture(test::read_text(test::source_dir() + "/tests/fixtures/verify/posture_host.json"))
          .has_value());
  auto deep = verify::parse_posture("{\"a\":" + std::string(10000, '[') + std::string(10000, ']') + "}");
  REQUIRE_FALSE(deep.has_value());
  CHECK(deep.error().message == "JSON nested deeper than 32 levels");
  CHECK(verify::parse_posture("[1, 2]").error().message == "JSON, but not an object");
  CHECK(verify::parse_posture("{\"schema\": \"isoharness.posture/v1\", \"observ").error().message ==
        "not a JSON document (or not UTF-8)");
  CHECK_FALSE(verify::parse_posture("{\"a\": \"\xff\"}").has_value());
}

TEST_CASE("evidence is cut at a character boundary, so the result stays UTF-8", "[verify]") {
  std::string text = std::string(2047, 'x') + "\xc3\xa9" + "tail";  // é straddles byte 2048
  std::string cut = verify::detail::bounded(text);
  CHECK(cut.substr(0, 2047) == std::string(2047, 'x'));
  CHECK(cut.find('\xc3') == std::string::npos);
  CHECK_NOTHROW(json(cut).dump());
}

TEST_CASE("an observation whose name is not a string is a schema problem, never an exception", "[verify]") {
  // The shape a fuzzer found: `name` holds an object. Every lookup by name meets it first.
  for (const json& bad_name : {json::object({{"x", 1}}), json::array({1}), json(7), json(true)}) {
    json p = real_posture();
    p["observations"].insert(p["observations"].begin(),
                             json{{"name", bad_name}, {"status", "ok"}, {"value", {}}});
    CHECK_FALSE(verify::posture_schema_problems(p).empty());
    std::vector<verify::CheckResult> checks;
    REQUIRE_NOTHROW(checks = run(p));
    CHECK(passes(checks) == 0);
  }
  // The egress targets' fields are the sandbox's too.
  json p = real_posture();
  for (auto& o : p["observations"])
    if (o["name"] == "egress")
      o["value"]["targets"] = json::array({{{"name", json::object()}, {"result", 3}}});
  REQUIRE_NOTHROW(run(p));
}
