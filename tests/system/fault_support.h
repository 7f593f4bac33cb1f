// Shared by the fault tests (tests/system/fault_*.cpp): the real `isoharness` binary run in
// the foreground or in the background, a probe bundle whose sandbox s2 pauses mid-probe,
// and the checks every fault ends with (the journal, nothing left behind, a rerun).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "harness/common/subprocess.h"

namespace isoharness::test::fault {

std::string isoharness_bin();
std::string scenarios();

// Runs isoharness with args (after `prefix`, e.g. a wrapper program) to its end.
RunResult run_isoharness(std::vector<std::string> args, const std::map<std::string, std::string>& env = {},
                         std::vector<std::string> prefix = {});

// `run SCENARIO` under runc on tier nodes, `attempts` sandboxes s1, s2, … one at a time.
std::vector<std::string> run_args(const std::string& out, int attempts, const std::string& bundle = "");

// The run id from "isoharness run <id>: ..." on stderr, "" when the run never started.
std::string run_id_of(const std::string& err);

// The real isoprobe bundle with tests/fixtures/fault/isoprobe in front of it: s2 pauses.
std::string pausing_bundle(const std::string& dir);

// Sandbox records in a journal, and their "id"s in order.
std::vector<std::string> journalled_sandboxes(const std::string& journal);

// isoharness started in the background, stdout and stderr into `log`. The destructor
// kills it (SIGKILL, by pid) if it is still running and reaps it.
class BackgroundRun {
 public:
  BackgroundRun(const std::vector<std::string>& args, const std::string& log);
  ~BackgroundRun();
  BackgroundRun(const BackgroundRun&) = delete;
  BackgroundRun& operator=(const BackgroundRun&) = delete;

  pid_t pid() const { return pid_; }
  std::string err() const;
  // The run id once the run has printed it ("" if it has not within the deadline).
  std::string run_id(std::chrono::seconds deadline);
  // The exit code (128 + signal when killed by one), or -1 if still running at the deadline.
  int wait(std::chrono::seconds deadline);

 private:
  pid_t pid_ = -1;
  std::string log_;
  bool reaped_ = false;
};

// The pid of s2's paused probe (`sleep 20.25` in one of the run's cgroups), 0 if it does
// not show within the deadline.
pid_t wait_paused_probe(const std::string& run_id, std::chrono::seconds deadline);

// The host pid of a container's first process, asked of runc under the run's --root.
pid_t container_pid(const std::string& run_id, const std::string& name);

// Runs `isoharness local cleanup --run ID` when it goes, so that a failing test (or a
// harness that left something behind) does not leave the run on the machine.
struct CleanupOnExit {
  std::string run_id;
  ~CleanupOnExit();
};

// Nothing of the run is on the machine, and `local cleanup --run ID` finds nothing to remove.
void check_nothing_left(const std::string& run_id);

// A plain run of one sandbox into dir/rerun passes: the fault left nothing in the way.
void check_rerun_works(const std::string& dir);

}  // namespace isoharness::test::fault
