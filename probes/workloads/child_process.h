// Starting other programs from workloads: always by absolute path found by searching PATH
// ourselves, always with a fixed argv array (never a shell string built from input),
// always bounded in time by a watchdog that kills a child that overstays.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace isoprobe::workloads {

// The absolute path of the first executable regular file named `name` in the
// colon-separated directory list `path_list` (empty and relative entries are ignored:
// they would mean "the current directory"). Empty when there is none.
std::string find_in_path(std::string_view name, std::string_view path_list);
// Same, with $PATH (empty when PATH is unset).
std::string find_in_path(std::string_view name);

// Writes a 129-byte static x86-64 ELF executable that calls exit_group(0) and nothing
// else: the smallest thing exec can start, the same in every image. Returns an error
// message, or nothing on success.
std::optional<std::string> write_tiny_exit_program(const std::string& path);

// Runs programs to completion, one at a time, each under a deadline. A watchdog thread,
// started once, kills (SIGKILL) a child that outlives its deadline. The child is waited
// for with WNOWAIT first, so the watchdog can never signal a recycled pid.
class ChildRunner {
 public:
  explicit ChildRunner(std::chrono::milliseconds limit);
  ~ChildRunner();
  ChildRunner(const ChildRunner&) = delete;
  ChildRunner& operator=(const ChildRunner&) = delete;

  // Starts argv[0] (an absolute path) with stdin, stdout and stderr on /dev/null and our
  // environment, and waits for it. Returns an error message unless it exited with 0.
  std::optional<std::string> run(const std::vector<std::string>& argv);

 private:
  void watch();

  std::chrono::milliseconds limit_;
  std::mutex mutex_;
  std::condition_variable wake_;
  pid_t current_ = 0;  // guarded by mutex_
  std::chrono::steady_clock::time_point deadline_;
  bool killed_ = false;
  bool stop_ = false;
  std::thread watchdog_;
};

}  // namespace isoprobe::workloads
