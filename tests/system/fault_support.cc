#include "tests/system/fault_support.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "harness/common/error.h"
#include "harness/deploy/local/host_ops.h"
#include "harness/deploy/local/run_state.h"
#include "tests/support/test_support.h"
#include "tests/system/local_test_support.h"

extern char** environ;

namespace isoharness::test::fault {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// "sleep 20.25" as /proc/PID/cmdline holds it.
const std::string kPauseCmdline = std::string(
    "sleep\0"
    "20.25\0",
    12);

bool in_run_cgroup(const std::string& pid, const std::string& run_id) {
  std::ifstream in("/proc/" + pid + "/cgroup");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  return text.find("/ih-" + run_id + "-") != std::string::npos;
}

pid_t find_paused_probe(const std::string& run_id) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (deploy::local::read_file_bounded("/proc/" + pid + "/cmdline", 64) != kPauseCmdline) continue;
    if (in_run_cgroup(pid, run_id)) return static_cast<pid_t>(std::stol(pid));
  }
  return 0;
}

}  // namespace

std::string isoharness_bin() {
  return test::binary_dir() + "/harness/cli/isoharness";
}

std::string scenarios() {
  return test::source_dir() + "/scenarios";
}

RunResult run_isoharness(std::vector<std::string> args, const std::map<std::string, std::string>& env,
                         std::vector<std::string> prefix) {
  args.insert(args.begin(), isoharness_bin());
  args.insert(args.begin(), prefix.begin(), prefix.end());
  RunOptions o;
  o.deadline = std::chrono::minutes(10);
  o.env_set = env;
  auto r = run_command(args, o);
  REQUIRE(r.has_value());
  return *r;
}

std::vector<std::string> run_args(const std::string& out, int attempts, const std::string& bundle) {
  std::vector<std::string> args = {"run",
                                   scenarios() + "/standard.yaml",
                                   "--scenarios-dir",
                                   scenarios(),
                                   "--runtimes",
                                   "runc",
                                   "--node-classes",
                                   "tier",
                                   "--attempts",
                                   std::to_string(attempts),
                                   "--parallel",
                                   "1",
                                   "--out",
                                   out};
  if (!bundle.empty()) args.insert(args.end(), {"--isoprobe-bundle", bundle});
  return args;
}

std::string run_id_of(const std::string& err) {
  std::smatch m;
  return std::regex_search(err, m, std::regex("isoharness run ([a-z0-9]+):")) ? m[1].str() : "";
}

std::string pausing_bundle(const std::string& dir) {
  const std::string bundle = dir + "/bundle";
  fs::copy(test::binary_dir() + "/probes/isoprobe-bundle", bundle, fs::copy_options::recursive);
  fs::rename(bundle + "/isoprobe", bundle + "/isoprobe.real");
  fs::copy_file(test::source_dir() + "/tests/fixtures/fault/isoprobe", bundle + "/isoprobe");
  return bundle;
}

std::vector<std::string> journalled_sandboxes(const std::string& journal) {
  std::vector<std::string> ids;
  std::ifstream in(journal);
  for (std::string line; std::getline(in, line);) {
    auto rec = nlohmann::json::parse(line, nullptr, false);
    if (rec.is_object() && rec.value("kind", "") == "sandbox") ids.push_back(rec.value("id", "?"));
  }
  return ids;
}

BackgroundRun::BackgroundRun(const std::vector<std::string>& args, const std::string& log) : log_(log) {
  std::vector<std::string> argv = args;
  argv.insert(argv.begin(), isoharness_bin());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  const int rc = posix_spawn(&pid_, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  REQUIRE(rc == 0);
}

BackgroundRun::~BackgroundRun() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

std::string BackgroundRun::err() const {
  return deploy::local::read_file_bounded(log_, 1 << 20);
}

std::string BackgroundRun::run_id(std::chrono::seconds deadline) {
  for (auto end = std::chrono::steady_clock::now() + deadline; std::chrono::steady_clock::now() < end;) {
    if (auto id = run_id_of(err()); !id.empty()) return id;
    std::this_thread::sleep_for(200ms);
  }
  return "";
}

int BackgroundRun::wait(std::chrono::seconds deadline) {
  if (reaped_) return -1;
  for (auto end = std::chrono::steady_clock::now() + deadline; std::chrono::steady_clock::now() < end;) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(200ms);
  }
  return -1;
}

pid_t wait_paused_probe(const std::string& run_id, std::chrono::seconds deadline) {
  for (auto end = std::chrono::steady_clock::now() + deadline; std::chrono::steady_clock::now() < end;) {
    if (pid_t pid = find_paused_probe(run_id)) return pid;
    std::this_thread::sleep_for(200ms);
  }
  return 0;
}

pid_t container_pid(const std::string& run_id, const std::string& name) {
  auto r = run_command({"runc", "--root", "/run/isoharness/" + run_id + "/runc", "state",
                        deploy::local::container_id(run_id, name)});
  REQUIRE(r.has_value());
  INFO(r->err);
  REQUIRE(r->ok());
  auto state = nlohmann::json::parse(r->out);
  return static_cast<pid_t>(state.at("pid").get<long>());
}

CleanupOnExit::~CleanupOnExit() {
  if (run_id.empty()) return;
  RunOptions o;
  o.deadline = std::chrono::minutes(2);
  (void)run_command({isoharness_bin(), "local", "cleanup", "--run", run_id}, o);
}

void check_nothing_left(const std::string& run_id) {
  REQUIRE_FALSE(run_id.empty());
  CHECK(test::local::leftovers_of("/run/isoharness", run_id).empty());
  auto cleanup = run_isoharness({"local", "cleanup", "--run", run_id});
  INFO(cleanup.out + cleanup.err);
  CHECK_THAT(cleanup.out + cleanup.err,
             Catch::Contains("nothing to clean up") || Catch::Contains("no run " + run_id + " recorded"));
}

void check_rerun_works(const std::string& dir) {
  auto r = run_isoharness(run_args(dir + "/rerun", 1));
  CleanupOnExit cleanup{run_id_of(r.err)};
  INFO(r.err);
  CHECK(r.exit_code == kExitPass);
  CHECK(journalled_sandboxes(dir + "/rerun/journal.jsonl").size() == 1);
  check_nothing_left(run_id_of(r.err));
}

}  // namespace isoharness::test::fault
