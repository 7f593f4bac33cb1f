// Injected faults through the real `isoharness run` (issue 11): a missing runtime and an
// unwritable --out. Each must end loudly with exit 3 naming the step, leave nothing of
// the run behind for `local cleanup --run ID`, and a rerun must work.
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
  auto cleanup = run_isoharness({"local", "cleanup", "--run", run_id});
  CHECK(cleanup.exit_code == 0);
  CHECK_THAT(cleanup.out, Catch::Contains("nothing to clean up"));
}

// A PATH that holds every program of this machine but one.
std::string path_without(const std::string& dir, const std::string& program) {
  fs::create_directories(dir);
  for (const char* bin : {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(bin, ec)) {
      const auto name = e.path().filename().string();
      if (name == program || fs::exists(dir + "/" + name)) continue;
      fs::create_symlink(e.path(), dir + "/" + name, ec);
    }
  }
  return dir;
}

}  // namespace

TEST_CASE("fault: runsc missing from PATH stops a gVisor run with exit 3, naming it", "[system][fault]") {
  test::require_system(kPrograms);
  test::local::ScratchDir dir;
  const std::string args_out = dir.path + "/out";
  auto r = run_isoharness({"run", scenarios() + "/strict.yaml", "--scenarios-dir", scenarios(), "--runtimes",
                           "gvisor", "--attempts", "1", "--out", args_out},
                          {{"PATH", path_without(dir.path + "/bin", "runsc")}});
  INFO(r.err);
  CHECK(r.exit_code == kExitInfrastructure);
  CHECK_THAT(r.err, Catch::Contains("runsc"));
  nothing_left(run_id_of(r.err));
  // With runsc back on PATH the same run works.
  auto again = run_isoharness({"run", scenarios() + "/strict.yaml", "--scenarios-dir", scenarios(),
                               "--runtimes", "gvisor", "--attempts", "1", "--out", dir.path + "/out2"});
  INFO(again.err);
  CHECK(again.exit_code == 0);
  nothing_left(run_id_of(again.err));
}

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
