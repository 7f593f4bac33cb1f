// Injected faults through the real `isoharness` binary, the faults that need no
// timing: --out read-only or filling up mid-run, runsc missing, nftables refusing a rule.
// (The faults injected mid-probe are in fault_midrun_test.cpp.) Each must end loudly
// naming the step, with exit 3, keep every sandbox finished before the fault in the
// journal, leave nothing for `local cleanup`, and let the next run work.
#include <sys/mount.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "harness/common/error.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/runner/journal.h"
#include "tests/support/test_support.h"
#include "tests/system/fault_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
using namespace isoharness::test::fault;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kFaultPrograms = {"runc", "runsc",   "sshd", "ssh",     "ssh-keygen",
                                                 "nft",  "dnsmasq", "ip",   "unshare", "nsenter"};

// A tmpfs mounted for one test and unmounted (lazily, so a failing test cannot keep it)
// whichever way the test ends.
struct TmpfsMount {
  TmpfsMount(const std::string& at, unsigned long flags, const std::string& size) : path(at) {
    fs::create_directories(path);
    REQUIRE(::mount("tmpfs", path.c_str(), "tmpfs", flags, ("size=" + size).c_str()) == 0);
  }
  ~TmpfsMount() { ::umount2(path.c_str(), MNT_DETACH); }
  std::string path;
};

// Writes into dir until the file system is full.
void fill_up(const std::string& dir) {
  std::ofstream filler(dir + "/filler", std::ios::binary);
  const std::string block(64 * 1024, 'x');
  while (filler.write(block.data(), static_cast<std::streamsize>(block.size())) && filler.flush()) {
  }
}

}  // namespace

TEST_CASE("fault: a read-only --out is refused loudly before any sandbox starts", "[system][fault]") {
  test::require_system(kFaultPrograms);
  test::local::ScratchDir dir;
  TmpfsMount ro(dir.path + "/ro", MS_RDONLY, "1m");
  auto r = run_isoharness(run_args(ro.path, 1));
  INFO(r.err);
  CHECK(r.exited);
  CHECK(r.exit_code == kExitInfrastructure);
  CHECK_THAT(r.err, Catch::Contains("cannot write the diagnostic log in " + ro.path));
  CHECK_THAT(r.err, Catch::Contains("Read-only file system"));
  CHECK(run_id_of(r.err).empty());  // refused before the run (and anything of it) began
  check_rerun_works(dir.path);
}

TEST_CASE("fault: the disk under --out fills mid-run; the journal moves and says where", "[system][fault]") {
  test::require_system(kFaultPrograms);
  test::local::ScratchDir dir;
  TmpfsMount out(dir.path + "/out", 0, "4m");
  CleanupOnExit cleanup;
  BackgroundRun run(run_args(out.path, 3, pausing_bundle(dir.path)), dir.path + "/run.log");
  const std::string id = run.run_id(60s);
  REQUIRE_FALSE(id.empty());
  cleanup.run_id = id;
  // s1 is journalled and s2 is mid-probe: the disk fills before s2's record is written.
  REQUIRE(wait_paused_probe(id, 300s) != 0);
  REQUIRE(journalled_sandboxes(out.path + "/journal.jsonl") == std::vector<std::string>{"s1"});
  fill_up(out.path);
  const int code = run.wait(300s);
  const std::string kept = std::string(runner::kKeptJournalDir) + "/" + id + ".jsonl";
  INFO(run.err());
  CHECK(code == kExitInfrastructure);
  CHECK_THAT(run.err(),
             Catch::Contains("cannot write the journal " + out.path + "/journal.jsonl: No space left"));
  CHECK_THAT(run.err(), Catch::Contains("kept in " + kept));
  CHECK_THAT(run.err(), Catch::Contains("writing the result: cannot write " + out.path + "/result.json.tmp"));
  // Nothing measured is lost: the kept journal has the header and all three sandboxes.
  CHECK(journalled_sandboxes(kept) == std::vector<std::string>{"s1", "s2", "s3"});
  // ... and `isoharness report` turns the kept journal into the run's result and reports.
  const std::string rebuilt = dir.path + "/rebuilt";
  auto report = run_isoharness({"report", kept, "--out", rebuilt});
  INFO(report.err);
  CHECK(report.exit_code == kExitInfrastructure);  // a run that did not finish
  CHECK_THAT(report.err,
             Catch::Contains("3 sandboxes") && Catch::Contains("result " + rebuilt + "/result.json"));
  const auto result = nlohmann::json::parse(std::ifstream(rebuilt + "/result.json"));
  CHECK(result["run"]["id"] == id);
  CHECK(result["sandboxes"].size() == 3);
  CHECK(result["summary"]["verdict"] == "error");
  CHECK(result["summary"]["rebuilt_from_journal"] == kept);
  CHECK(fs::exists(rebuilt + "/report.md"));
  CHECK(fs::exists(rebuilt + "/junit.xml"));
  fs::remove(kept);
  check_nothing_left(id);
  check_rerun_works(dir.path);
}

TEST_CASE("fault: runsc missing refuses the gVisor sandboxes loudly, never runs them under runc",
          "[system][fault]") {
  test::require_system(kFaultPrograms);
  test::local::ScratchDir dir;
  const std::string runsc = deploy::local::find_program("runsc");
  REQUIRE_FALSE(runsc.empty());
  // In a mount namespace of its own, runsc is hidden under /dev/null (not executable), in
  // PATH and in the standard directories alike; the host's view is unchanged.
  const std::vector<std::string> hide = {"unshare",
                                         "--mount",
                                         "--propagation",
                                         "slave",
                                         "--",
                                         "sh",
                                         "-c",
                                         "mount --bind /dev/null \"$0\" && exec \"$@\"",
                                         runsc};
  auto args = run_args(dir.path + "/out", 1);
  *(std::find(args.begin(), args.end(), "--runtimes") + 1) = "gvisor";
  auto r = run_isoharness(args, {}, hide);
  CleanupOnExit cleanup{run_id_of(r.err)};
  INFO(r.err);
  CHECK(r.exit_code == kExitInfrastructure);
  CHECK_THAT(r.err, Catch::Contains("runtime runsc (runtime class gvisor"));
  CHECK_THAT(r.err, Catch::Contains("is not installed; the sandbox is not started and never falls back"));
  auto result = nlohmann::json::parse(test::read_text(dir.path + "/out/result.json"));
  REQUIRE(result["sandboxes"].size() == 1);
  for (const auto& s : result["sandboxes"]) {
    CHECK(s["runtime"] == "gvisor");
    CHECK_THAT(s["error"].dump(), Catch::Contains("runtime runsc"));
    for (const auto& c : s["checks"]) CHECK(c["status"] != "pass");
  }
  CHECK(result["summary"]["verdict"] == "error");
  check_nothing_left(run_id_of(r.err));
  check_rerun_works(dir.path);
}

TEST_CASE("fault: nftables refusing a sandbox's egress rules is that sandbox's loud error; the rest run",
          "[system][fault]") {
  test::require_system(kFaultPrograms);
  test::local::ScratchDir dir;
  const std::string shims = dir.path + "/shims";
  fs::create_directories(shims);
  fs::copy_file(test::source_dir() + "/tests/fixtures/fault/nft", shims + "/nft");
  const char* path = std::getenv("PATH");
  auto r =
      run_isoharness(run_args(dir.path + "/out", 3), {{"PATH", shims + ":" + (path ? path : "/usr/bin")}});
  CleanupOnExit cleanup{run_id_of(r.err)};
  INFO(r.err);
  CHECK(r.exit_code == kExitInfrastructure);
  CHECK_THAT(r.err, Catch::Contains("nftables (egress policy of sandbox s2)"));
  CHECK_THAT(r.err, Catch::Contains("refused by the fault test's nft shim"));
  // s2 carries the error and never ran without its egress policy; s1 and s3 are checked.
  CHECK(journalled_sandboxes(dir.path + "/out/journal.jsonl") == std::vector<std::string>{"s1", "s2", "s3"});
  auto result = nlohmann::json::parse(test::read_text(dir.path + "/out/result.json"));
  for (const auto& s : result["sandboxes"]) {
    INFO(s["id"]);
    if (s["id"] == "s2") {
      CHECK_FALSE(s["error"].is_null());
      CHECK(s["checks"].empty());
    } else {
      CHECK(s["error"].is_null());
      CHECK_FALSE(s["checks"].empty());
    }
  }
  CHECK(result["summary"]["verdict"] == "error");
  check_nothing_left(run_id_of(r.err));
  check_rerun_works(dir.path);
}
