#include "probes/core/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace isoprobe {

std::string ChildResult::describe() const {
  if (spawn_err) return std::string("could not start a child: ") + std::strerror(spawn_err);
  if (timed_out) return "child killed at the deadline";
  if (!reported) return "child exited without a report (wait status " + std::to_string(wait_status) + ")";
  if (report.step == 0) return "every step succeeded";
  return "step " + std::to_string(report.step) + " failed: " + std::strerror(report.err) + " (errno " +
         std::to_string(report.err) + ")";
}

ChildResult run_in_child(ChildReport (*fn)(), std::chrono::milliseconds deadline) {
  ChildResult result;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    result.spawn_err = errno;
    return result;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    result.spawn_err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return result;
  }
  if (pid == 0) {
    ::close(fds[0]);
    ChildReport r = fn();
    ssize_t n = ::write(fds[1], &r, sizeof r);
    ::_exit(n == static_cast<ssize_t>(sizeof r) ? 0 : 1);
  }
  ::close(fds[1]);
  const auto end = std::chrono::steady_clock::now() + deadline;
  auto left_ms = [&] {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()).count();
    return static_cast<int>(left > 0 ? left : 0);
  };
  ChildReport report;
  std::size_t got = 0;
  while (got < sizeof report) {
    pollfd p{fds[0], POLLIN, 0};
    int rc = ::poll(&p, 1, left_ms());
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) break;
    ssize_t n = ::read(fds[0], reinterpret_cast<char*>(&report) + got, sizeof report - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fds[0]);
  if (got == sizeof report) {
    result.reported = true;
    result.report = report;
  }
  // Reap: wait until the deadline, then kill, then wait (bounded) for the corpse.
  while (true) {
    pid_t w = ::waitpid(pid, &result.wait_status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) return result;
    if (left_ms() == 0) break;
    ::usleep(1000);
  }
  result.timed_out = !result.reported;
  ::kill(pid, SIGKILL);
  for (int i = 0; i < 2000; ++i) {  // at most ~2 s for the kernel to finish it off
    pid_t w = ::waitpid(pid, &result.wait_status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) break;
    ::usleep(1000);
  }
  return result;
}

}  // namespace isoprobe
