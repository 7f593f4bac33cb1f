// What a sandbox sees of its node (harness/runner/node_view.h), read from fixture text:
// x86 and arm64 /proc files, and what a hostile sandbox could answer instead.
#include <catch2/catch.hpp>

#include "harness/runner/node_view.h"

using namespace isoharness::runner;

namespace {

constexpr const char* kCpuinfo =
    "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\nflags\t\t: "
    "fpu\n\n"
    "processor\t: 1\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n\n";
constexpr const char* kStatus =
    "Name:\tcat\nCpus_allowed:\t2\nCpus_allowed_list:\t1\nMems_allowed_list:\t0\n";
constexpr const char* kBootId = "5c0ffee0-1234-4abc-9def-0123456789ab\n";
constexpr const char* kVersion = "Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016\n";

}  // namespace

TEST_CASE("node view: CPU model, CPUs, boot id and kernel from the sandbox's /proc", "[runner]") {
  auto v = parse_node_view({kCpuinfo, kStatus, kBootId, kVersion, false});
  CHECK(v["cpu_model"] == "Intel(R) Xeon(R) CPU @ 2.20GHz");
  CHECK(v["cpus_listed"] == 2);
  CHECK_FALSE(v.contains("cpus_listed_at_least"));
  CHECK(v["cpus_allowed"] == "1");
  CHECK(v["boot_id"] == "5c0ffee0-1234-4abc-9def-0123456789ab");
  CHECK(v["kernel"] == "Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016");

  SECTION("arm64 names the machine in Model; a cut cpuinfo counts at least") {
    auto arm = parse_node_view({"processor\t: 0\nBogoMIPS\t: 50.00\n\nModel\t\t: Raspberry Pi 4\n",
                                "Cpus_allowed_list:\t0-3,6\n", kBootId, kVersion, true});
    CHECK(arm["cpu_model"] == "Raspberry Pi 4");
    CHECK(arm["cpus_listed"] == 1);
    CHECK(arm["cpus_listed_at_least"] == true);
    CHECK(arm["cpus_allowed"] == "0-3,6");
  }
}

TEST_CASE("node view: what cannot be read, or is no such value, is null, never a guess", "[runner]") {
  auto empty = parse_node_view({});
  for (const char* key : {"cpu_model", "cpus_listed", "cpus_allowed", "boot_id", "kernel"}) {
    INFO(key);
    CHECK(empty[key].is_null());
  }
  // A hostile sandbox: a boot id that is no UUID, a CPU list with words in it, terminal
  // escapes and a very long line in the model name, a key that only starts like ours.
  const std::string long_model = "model name\t: \x1b]0;owned\x07" + std::string(5000, 'A') + "\n";
  auto hostile = parse_node_view({"model names: x\n" + long_model, "Cpus_allowed_list:\t1; rm -rf /\n",
                                  "../../etc/passwd\n", "\x1b[2J\n", false});
  const std::string model = hostile["cpu_model"];
  CHECK(model.size() <= 200);
  CHECK(model.find('\x1b') == std::string::npos);
  CHECK(model.rfind("?]0;owned?", 0) == 0);
  CHECK(hostile["cpus_allowed"].is_null());
  CHECK(hostile["boot_id"].is_null());
  CHECK(hostile["kernel"] == "?[2J");
}
