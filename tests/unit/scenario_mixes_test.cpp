// Named workload mixes in a scenario (`mixes:`), kept apart from scenario_test.cpp.
#include <catch2/catch.hpp>

#include "harness/common/error.h"
#include "harness/scenario/scenario.h"
#include "tests/support/test_support.h"

using namespace isoharness;

namespace {

const std::string kHead =
    "name: p\neval_set:\n  tasks:\n    - name: t\n      items: [ {name: i} ]\n"
    "workloads:\n  - { name: compile_c, weight: 2 }\n  - { name: ssh_rtt, weight: 3 }\n";

std::string errors_of(const std::string& yaml) {
  try {
    (void)scenario::parse_scenario(yaml, "s.yaml");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a scenario declares named mixes over its workloads", "[scenario]") {
  const auto s =
      scenario::parse_scenario(kHead + "mixes:\n  compile_heavy: { compile_c: 4, ssh_rtt: 1 }\n", "s.yaml");
  REQUIRE(s.mixes.count("compile_heavy") == 1);
  CHECK(s.mixes.at("compile_heavy").at("compile_c") == 4);
  CHECK(s.mixes.at("compile_heavy").at("ssh_rtt") == 1);
  const auto shipped = scenario::load_scenario(test::source_dir() + "/scenarios/parity/default.yaml");
  CHECK(shipped.mixes.count("compile_heavy") == 1);
  CHECK(shipped.mixes.count("interactive") == 1);
}

TEST_CASE("every bad mix is named with its line at once", "[scenario]") {
  const std::string e = errors_of(kHead +
                                  "mixes:\n"
                                  "  default: { compile_c: 1 }\n"           // line 10
                                  "  typo: { compile_cc: 1 }\n"             // line 11
                                  "  negative: { compile_c: -1 }\n"         // line 12
                                  "  zero: { compile_c: 0, ssh_rtt: 0 }\n"  // line 13
                                  "  empty: {}\n");                         // line 14
  CHECK(e.find("s.yaml:10") != std::string::npos);
  CHECK(e.find("'default' is reserved") != std::string::npos);
  CHECK(e.find("s.yaml:11") != std::string::npos);
  CHECK(e.find("'compile_cc' is not one of the scenario's workloads") != std::string::npos);
  CHECK(e.find("s.yaml:12") != std::string::npos);
  CHECK(e.find("weight must be a number >= 0") != std::string::npos);
  CHECK(e.find("at least one positive weight") != std::string::npos);
  CHECK(e.find("a mix is a mapping") != std::string::npos);
}

TEST_CASE("a named mix may state the compute share of its task family's time", "[scenario]") {
  const auto s = scenario::parse_scenario(
      kHead +
          "mixes:\n"
          "  reading: { weights: { ssh_rtt: 3, compile_c: 1 }, compute_fraction: 0.2 }\n"
          "  plain: { compile_c: 1 }\n"
          "  long: { weights: { compile_c: 1 } }\n",
      "s.yaml");
  CHECK(s.mixes.at("reading").at("ssh_rtt") == 3);
  CHECK(s.mixes.at("long").at("compile_c") == 1);
  CHECK(s.mix_compute_fractions == std::map<std::string, double>{{"reading", 0.2}});
  const std::string e =
      errors_of(kHead +
                "mixes:\n"
                "  big: { weights: { compile_c: 1 }, compute_fraction: 1.5 }\n"      // line 10
                "  word: { weights: { compile_c: 1 }, compute_fraction: most }\n"    // line 11
                "  extra: { weights: { compile_c: 1 }, share: 0.2 }\n"               // line 12
                "  typo: { weights: { compile_cc: 1 }, compute_fraction: 0.5 }\n");  // line 13
  CHECK(e.find("s.yaml:10") != std::string::npos);
  CHECK(e.find("s.yaml:11") != std::string::npos);
  CHECK(e.find("compute_fraction must be a number from 0 to 1") != std::string::npos);
  CHECK(e.find("s.yaml:12") != std::string::npos);
  CHECK(e.find("takes only `weights` and `compute_fraction`") != std::string::npos);
  CHECK(e.find("s.yaml:13") != std::string::npos);
  CHECK(e.find("'compile_cc' is not one of the scenario's workloads") != std::string::npos);
}
