// `isoharness parity` against real runc and runsc sandboxes, end to end through the real
// binary: interleaved rounds, an A/A twin, the getpid cross-check in the same cells and
// rounds, the reports, and nothing left behind. Five quick rounds (the fewest that give a
// 95 % interval) check the machinery, not the numbers (bench/parity_matrix_bench.sh times
// the full matrix).
#include <catch2/catch.hpp>
#include <filesystem>
#include <set>

#include "harness/common/subprocess.h"
#include "tests/support/test_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string scenarios() {
  return test::source_dir() + "/scenarios";
}
std::string isoharness_bin() {
  return test::binary_dir() + "/harness/cli/isoharness";
}

const json* comparison(const json& cell, const std::string& workload) {
  for (const auto& c : cell["comparisons"])
    if (c["workload"] == workload) return &c;
  return nullptr;
}

}  // namespace

TEST_CASE("parity: gVisor and an A/A twin against runc, interleaved, with the getpid cross-check",
          "[system][parity]") {
  test::require_system({"runc", "runsc", "sshd", "ssh-keygen", "nft", "dnsmasq", "ip"});
  test::local::ScratchDir dir;
  auto r = run_command({isoharness_bin(), "parity", "--scenarios-dir", scenarios(), "--baseline", "runc/tier",
                        "--candidate", "runc/tier", "--candidate", "gvisor/tier", "--rounds", "5", "--quick",
                        "--workloads", "getpid,cpu_hash,ssh_rtt", "--out", dir.path},
                       RunOptions{.deadline = std::chrono::minutes(10)});
  REQUIRE(r.has_value());
  INFO(r->err);
  // getpid weighs 0 in the default scenario and cpu_hash and ssh_rtt are close to 1, so
  // the human-baseline verdict may be parity (exit 0) or, on a loaded machine, not (1).
  CHECK((r->exit_code == 0 || r->exit_code == 1));
  for (const char* f : {"result.json", "parity.md", "parity.html", "junit.xml", "cells/parity.runc_tier.json",
                        "cells/parity.gvisor_tier.json", "cells/parity.runc_tier_2.json"})
    CHECK(fs::exists(dir.path + "/" + f));
  const json result = json::parse(test::read_text(dir.path + "/result.json"));
  const json& p = result["parity"];
  REQUIRE(p.is_object());
  CHECK(p["baseline"] == "runc/tier");
  CHECK(p["rounds"] == 5);
  // Every round times every cell, in an order of its own.
  REQUIRE(p["order"].size() == 5);
  for (const auto& order : p["order"]) {
    std::set<std::string> cells(order.begin(), order.end());
    CHECK(cells == std::set<std::string>{"runc/tier", "runc/tier#2", "gvisor/tier"});
  }
  // Samples: each workload plus the static loop, one per round, in every cell.
  for (const auto& [cell, workloads] : p["samples"].items()) {
    INFO(cell);
    for (const char* w : {"getpid", "getpid_static", "cpu_hash", "ssh_rtt"}) {
      INFO(w);
      REQUIRE(workloads.contains(w));
      CHECK(workloads[w].size() == 5);
    }
  }
  REQUIRE(p["cells"].size() == 2);
  for (const auto& cell : p["cells"]) {
    const auto* getpid = comparison(cell, "getpid");
    const auto* loop = comparison(cell, "getpid_static");
    REQUIRE(getpid);
    REQUIRE(loop);
    const double a = (*getpid)["ratio"]["estimate"], b = (*loop)["ratio"]["estimate"];
    INFO(cell["name"] << ": isoprobe " << a << ", static loop " << b);
    if (cell["name"] == "gvisor/tier") {
      CHECK(a > 10);  // every getpid is a trip through the sentry
      CHECK(b > 10);
      CHECK((*getpid)["verdict"] == "regression");
    } else {
      CHECK(cell["name"] == "runc/tier#2");
      CHECK(a == Approx(1).epsilon(0.5));
      CHECK(b == Approx(1).epsilon(0.5));
    }
    // The static loop never weighs in the human-baseline verdict.
    CHECK_FALSE(cell["mix"]["weights"].contains("getpid_static"));
  }
  REQUIRE(p["getpid_crosscheck"].size() == 2);
  for (const auto& x : p["getpid_crosscheck"]) {
    INFO(x.dump());
    // Two independent programs measuring one syscall in the same sandbox agree to a
    // factor well under 2 even in 5 quick rounds on a shared machine.
    CHECK(x["agreement"].get<double>() > 0.5);
    CHECK(x["agreement"].get<double>() < 2.0);
  }
  CHECK_THAT(test::read_text(dir.path + "/parity.md"), Catch::Contains("## getpid cross-check"));
  CHECK(test::local::leftovers_of("/run/isoharness", result["run"]["id"].get<std::string>()).empty());
}
