// Injected faults through the real `isoharness run` (issue 11): an unwritable --out. It
// must end loudly naming the directory and leave nothing of the run behind for
// `local cleanup --run ID`. (runsc missing cannot be injected through PATH: the local
// backend also looks in the standard directories; that fault needs a mount namespace.)
#include <sys/mount.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>

#include "harness/common/error.h"
#include "harness/common/subprocess.h"
#include "tests/support/test_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kPrograms = {"runc",       "runsc", "sshd",    "ssh",
                                            "ssh-keygen", "nft",   "dnsmasq", "ip"};

std::string isoharness_bin() {
  return test::binary_dir() + "/harness/cli/isoharness";
}
std::string scenarios() {
  return test::source_dir() + "/scenarios";
}

RunResult run_isoharness(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), isoharness_bin());
  RunOptions o;
  o.deadline = std::chrono::minutes(10);
  o.env_set = std::move(env);
  auto r = run_command(args, o);
  REQUIRE(r.has_value());
  return *r;
}

// The run id from "isoharness run <id>: ..." on stderr, "" when the run never started.
std::string run_id_of(const std::string& err) {
  std::smatch m;
  return std::regex_search(err, m, std::regex("isoharness run ([a-z0-9]+):")) ? m[1].str() : "";
}

void nothing_left(const std::string& run_id) {
  if (run_id.empty()) return;
  CHECK(test::local::leftovers_of("/run/isoharness", run_id).empty());
  // A run that ended cleanly left no record at all; one that crashed would be listed.
  auto cleanup = run_isoharness({"local", "cleanup", "--run", run_id});
  CHECK_THAT(cleanup.out + cleanup.err,
             Catch::Contains("nothing to clean up") || Catch::Contains("no run " + run_id + " recorded"));
}

}  // namespace

TEST_CASE("fault: a read-only --out is refused loudly before any sandbox starts", "[system][fault]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  const std::string out = dir.path + "/ro";
  fs::create_directories(out);
  REQUIRE(::mount("tmpfs", out.c_str(), "tmpfs", MS_RDONLY, "size=1m") == 0);
  auto r = run_isoharness({"run", scenarios() + "/standard.yaml", "--scenarios-dir", scenarios(),
                           "--runtimes", "runc", "--attempts", "1", "--out", out});
  ::umount2(out.c_str(), MNT_DETACH);
  INFO(r.err);
  CHECK(r.exited);
  CHECK((r.exit_code == kExitInfrastructure || r.exit_code == kExitBadInput));
  CHECK_THAT(r.err, Catch::Contains(out));
  nothing_left(run_id_of(r.err));
}
