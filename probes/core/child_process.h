// Short-lived children for probes that must not change this process: a child tries
// something (unshare, mount), reports how far it got through a pipe and exits. The
// parent waits at most until a deadline, kills it after that, and always reaps it.
#pragma once

#include <chrono>
#include <string>

namespace isoprobe {

// What the child reports: step 0 = every step worked; otherwise the step that failed
// and its errno. Only async-signal-safe calls may run in the child (we may have threads).
struct ChildReport {
  int step = 0;
  int err = 0;
};

struct ChildResult {
  bool reported = false;  // the child wrote a report
  ChildReport report;
  bool timed_out = false;  // killed at the deadline
  int spawn_err = 0;       // fork or pipe failed (errno)
  int wait_status = 0;
  std::string describe() const;  // one line for evidence
};

ChildResult run_in_child(ChildReport (*fn)(), std::chrono::milliseconds deadline);

}  // namespace isoprobe
