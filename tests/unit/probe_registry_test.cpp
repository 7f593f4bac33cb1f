#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "probes/core/registry.h"

using namespace isoprobe;

namespace {
Observation nothing(Context&) {
  return Observation{};
}
}  // namespace

TEST_CASE("the probe registry is sound and holds every contract observation", "[probe]") {
  auto probes = all_probes();
  CHECK(check_registry(probes).empty());
  std::set<std::string> names;
  for (const auto& p : probes) names.insert(std::string(p.name));
  // docs/CONTRACTS.md §3
  for (const char* n : {"kernel", "capabilities", "no_new_privs", "seccomp", "identity", "userns", "mount",
                        "kallsyms", "debugfs", "sysrq", "devices", "runtime_sockets", "kubernetes",
                        "processes", "network", "addresses", "filesystem", "boot_id", "egress"}) {
    INFO(n);
    CHECK(names.count(n) == 1);
  }
}

TEST_CASE("a duplicate probe name is an error that names it", "[probe]") {
  std::vector<ProbeDescriptor> list = {
      {"alpha", "first", std::chrono::milliseconds(10), nothing},
      {"beta", "second", std::chrono::milliseconds(10), nothing},
      {"alpha", "again", std::chrono::milliseconds(10), nothing},
  };
  auto problems = check_registry(list);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("probe #3 'alpha'") != std::string::npos);
  CHECK(problems[0].find("duplicate") != std::string::npos);
}

TEST_CASE("registry validation catches empty names, missing functions and zero deadlines", "[probe]") {
  std::vector<ProbeDescriptor> list = {
      {"", "no name", std::chrono::milliseconds(10), nothing},
      {"x", "no run", std::chrono::milliseconds(10), nullptr},
      {"y", "no deadline", std::chrono::milliseconds(0), nothing},
      {"z", "", std::chrono::milliseconds(10), nothing},
  };
  CHECK(check_registry(list).size() == 4);
}
