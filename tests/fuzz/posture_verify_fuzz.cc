// A posture document as the harness reads it from a sandbox (hostile by definition):
// parsed (verify::parse_posture), written back out as the result document does, checked
// against the schema and verified against a strict and a standard plan item. Nothing may escape verify, and a
// document that fails the schema check must not produce a single passing check.
#include <cstdlib>

#include "harness/policy/plan.h"
#include "harness/scenario/scenario.h"
#include "harness/verify/verify.h"
#include "tests/fuzz/fuzz_support.h"

using namespace isoharness;

namespace {

nlohmann::json expect_of(const std::string& scenario_file) {
  auto deployment =
      scenario::parse_deployment(fuzz::source_file("scenarios/deployments/local.yaml"), "local");
  auto s = scenario::parse_scenario(fuzz::source_file(scenario_file), scenario_file);
  return policy::to_json(policy::plan_scenario(s, deployment, {}))["items"][0]["expect"];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const nlohmann::json strict = expect_of("scenarios/strict.yaml");
  static const nlohmann::json standard = expect_of("scenarios/standard.yaml");
  static const verify::HostFacts host{
      "0f0e0d0c-0b0a-0908-0706-050403020100", "6.1.0", "host", "systemd", 120, {"lo", "eth0"}};
  static const std::vector<deploy::EgressTarget> targets = {
      {"target", "198.51.100.10", 80, "tcp", "target.example.com", "internet"},
      {"metadata", "169.254.169.254", 80, "http", "", "metadata"}};
  auto parsed = verify::parse_posture(fuzz::as_text(data, size));
  if (!parsed) return 0;
  const nlohmann::json& posture = parsed.value();
  (void)posture.dump();  // the runner keeps it in the result document
  const auto schema_problems = verify::posture_schema_problems(posture);
  for (const auto* expect : {&strict, &standard}) {
    for (const auto level : {isoharness::policy::Level::strict, isoharness::policy::Level::standard}) {
      auto checks =
          verify::verify_sandbox({*expect, posture, host, targets, level, nullptr, false, nullptr, true});
      for (const auto& c : checks) {
        (void)verify::to_json(c).dump();  // strict: invalid UTF-8 in a check would throw
        if (!schema_problems.empty() && c.status == isoharness::CheckStatus::pass) std::abort();
      }
    }
  }
  return 0;
}
