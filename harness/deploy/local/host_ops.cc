#include "harness/deploy/local/host_ops.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "harness/common/error.h"
#include "harness/common/log.h"

namespace isoharness::deploy::local {

RunResult run_checked(const std::vector<std::string>& argv, const std::string& what,
                      std::chrono::milliseconds deadline, const std::string& stdin_data) {
  RunOptions opts;
  opts.deadline = deadline;
  opts.max_output = std::size_t{256} * 1024;
  if (!stdin_data.empty()) opts.stdin_data = stdin_data;
  auto r = run_command(argv, opts);
  if (!r) throw InfraError(what + ": " + r.error().message);
  if (!r->ok()) throw InfraError(what + ": `" + render_argv(argv) + "` failed: " + r->describe());
  return std::move(r).value();
}

bool run_quietly(const std::vector<std::string>& argv, std::chrono::milliseconds deadline,
                 const std::string& stdin_data) {
  RunOptions opts;
  opts.deadline = deadline;
  opts.max_output = std::size_t{64} * 1024;
  if (!stdin_data.empty()) opts.stdin_data = stdin_data;
  auto r = run_command(argv, opts);
  return r && r->ok();
}

void log_teardown_failure(const std::string& step) noexcept {
  try {
    try {
      throw;
    } catch (const std::exception& e) {
      log::get().warn("teardown: {}: {}", step, e.what());
    } catch (...) {
      log::get().warn("teardown: {}: an unknown error", step);
    }
  } catch (...) {  // logging itself failed: nothing more can be said
  }
}

void log_teardown_step(bool ok, const std::string& step) noexcept {
  if (ok) return;
  try {
    log::get().warn(
        "teardown: {} failed; the run's cleanup (`isoharness local cleanup`) removes what is left", step);
  } catch (...) {
  }
}

namespace {

// The first line the adopt helper writes ("exit 0", "signal 9"), read up to the deadline;
// empty when the helper ended or the deadline passed first.
std::string read_status_line(int fd, std::chrono::steady_clock::time_point until) {
  std::string line;
  while (line.size() < 64 && line.find('\n') == std::string::npos) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return "";
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) return "";
    if (ready <= 0) continue;
    std::array<char, 64> buf{};
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    line.append(buf.data(), static_cast<std::size_t>(n));
  }
  const auto end = line.find('\n');
  return end == std::string::npos ? "" : line.substr(0, end);
}

}  // namespace

void run_detaching(const std::string& helper, const std::vector<std::string>& argv,
                   const std::string& log_path, const std::string& what, pid_t& adopter,
                   std::chrono::milliseconds deadline) {
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) throw InfraError(what + ": pipe: " + std::strerror(errno));
  std::vector<std::string> adopted = {helper, "adopt", "--max-seconds", "86400", "--"};
  adopted.insert(adopted.end(), argv.begin(), argv.end());
  auto pid = spawn_detached(adopted, log_path, {}, fds[1]);
  ::close(fds[1]);
  if (!pid) {
    ::close(fds[0]);
    throw InfraError(what + ": " + pid.error().message);
  }
  adopter = *pid;
  const std::string status = read_status_line(fds[0], std::chrono::steady_clock::now() + deadline);
  ::close(fds[0]);
  if (status == "exit 0") return;
  if (status.empty()) {
    // No word from the helper by the deadline: it and the program (its process group) go.
    ::killpg(*pid, SIGKILL);
    reap_adopter(adopter);
    throw InfraError(what + ": `" + render_argv(argv) + "` did not finish within " +
                     std::to_string(deadline.count()) + " ms; log " + log_path + ":\n" + log_tail(log_path));
  }
  throw InfraError(what + ": `" + render_argv(argv) + "` failed (" + status + "); log " + log_path + ":\n" +
                   log_tail(log_path));
}

bool delete_container(OciRuntime runtime, const std::string& bin, const std::string& root,
                      const std::string& id) noexcept {
  try {
    if (runtime == OciRuntime::runc) run_quietly({bin, "--root", root, "kill", id, "KILL"}, 10s);
    return run_quietly({bin, "--root", root, "delete", "--force", id}, 30s);
  } catch (...) {
    return false;
  }
}

void reap_adopter(pid_t& adopter) noexcept {
  if (adopter <= 0) return;
  // After the container's delete nothing is left for it to adopt, and it has exited or is
  // about to; the grace is for that.
  const auto until = std::chrono::steady_clock::now() + 2s;
  int status = 0;
  while (std::chrono::steady_clock::now() < until) {
    const pid_t w = ::waitpid(adopter, &status, WNOHANG);
    if (w == adopter || (w < 0 && errno == ECHILD)) {
      adopter = -1;
      return;
    }
    std::this_thread::sleep_for(5ms);
  }
  terminate_process(adopter, 1s);
  adopter = -1;
}

std::string netns_path(const std::string& ns) {
  return "/var/run/netns/" + ns;
}

std::vector<std::string> in_netns(const std::string& ns, std::vector<std::string> argv) {
  std::vector<std::string> out = {"nsenter", "--net=" + netns_path(ns), "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

void nft_apply(const std::string& ns, const std::string& script, const std::string& what) {
  run_checked(in_netns(ns, {"nft", "-f", "-"}), "nftables (" + what + ")", 20s, script);
}

std::vector<std::string> list_netns() {
  std::vector<std::string> out;
  DIR* d = ::opendir("/var/run/netns");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  ::closedir(d);
  return out;
}

std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream ss(std::string(path ? path : "") +
                       ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::string p = dir + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

std::string read_file_bounded(const std::string& path, std::size_t max) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::string text(max, '\0');
  in.read(text.data(), static_cast<std::streamsize>(max));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

void write_file(const std::string& path, const std::string& text, unsigned mode, long uid, long gid) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) throw InfraError("cannot write " + path + ": " + std::strerror(errno));
  std::size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      throw InfraError("cannot write " + path + ": " + std::strerror(e));
    }
    off += static_cast<std::size_t>(n);
  }
  bool ok = ::fchmod(fd, mode) == 0;
  if (uid >= 0) ok = ok && ::fchown(fd, static_cast<uid_t>(uid), static_cast<gid_t>(gid)) == 0;
  ::close(fd);
  if (!ok) throw InfraError("cannot set mode/owner of " + path + ": " + std::strerror(errno));
}

std::string log_tail(const std::string& path, int lines) {
  std::string text = read_file_bounded(path, 1 << 20);
  std::size_t pos = text.size();
  if (pos && text[pos - 1] == '\n') --pos;
  for (int i = 0; i < lines && pos != std::string::npos && pos > 0; ++i) pos = text.rfind('\n', pos - 1);
  return pos == std::string::npos || pos == 0 ? text : text.substr(pos + 1);
}

}  // namespace isoharness::deploy::local
