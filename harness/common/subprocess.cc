#include "harness/common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace isoharness {
namespace {

// A child starts with SIGPIPE, SIGINT and SIGTERM at their default actions and no signal
// blocked, whatever the harness itself ignores or blocks. Set these flags on the attr.
constexpr short kChildSignalFlags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;

void init_child_signals(posix_spawnattr_t* attr) {
  posix_spawnattr_init(attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(attr, &defaults);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(attr, &none);
}

using Clock = std::chrono::steady_clock;

struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() { close_both(); }
  void close_both() {
    for (int& f : fd)
      if (f >= 0) {
        ::close(f);
        f = -1;
      }
  }
  void close_end(int i) {
    if (fd[i] >= 0) {
      ::close(fd[i]);
      fd[i] = -1;
    }
  }
};

std::vector<std::string> merged_env(const std::map<std::string, std::string>& env_set) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    std::string key = entry.substr(0, eq);
    if (env_set.count(key)) continue;
    out.push_back(std::move(entry));
  }
  for (const auto& [k, v] : env_set) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> c_array(std::vector<std::string>& words) {
  std::vector<char*> out;
  out.reserve(words.size() + 1);
  for (auto& w : words) out.push_back(w.data());
  out.push_back(nullptr);
  return out;
}

void append_bounded(std::string& dst, const char* buf, std::size_t n, std::size_t cap, bool& truncated) {
  if (dst.size() >= cap) {
    truncated = truncated || n > 0;
    return;
  }
  std::size_t room = cap - dst.size();
  if (n > room) {
    dst.append(buf, room);
    truncated = true;
  } else {
    dst.append(buf, n);
  }
}

}  // namespace

std::string RunResult::describe() const {
  std::string what;
  if (timed_out) {
    what = "timed out";
  } else if (exited) {
    what = "exit " + std::to_string(exit_code);
  } else {
    what = "killed by signal " + std::to_string(term_signal);
  }
  const std::string& text = err.empty() ? out : err;
  auto start = text.find_first_not_of(" \n\t");
  if (start != std::string::npos) {
    auto end = text.find('\n', start);
    std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (line.size() > 300) line = line.substr(0, 300) + "…";
    what += ": " + line;
  }
  return what;
}

Expected<RunResult> run_command(const std::vector<std::string>& argv, const RunOptions& options) {
  ISOHARNESS_CHECK(!argv.empty());
  Pipe in, out, err;
  if (::pipe2(in.fd, O_CLOEXEC) != 0 || ::pipe2(out.fd, O_CLOEXEC) != 0 || ::pipe2(err.fd, O_CLOEXEC) != 0) {
    return make_error(std::string("pipe: ") + std::strerror(errno), errno);
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, options.merge_stderr ? out.fd[1] : err.fd[1], 2);
  if (options.cwd) posix_spawn_file_actions_addchdir_np(&actions, options.cwd->c_str());

  posix_spawnattr_t attr;
  init_child_signals(&attr);
  posix_spawnattr_setflags(&attr, kChildSignalFlags);

  std::vector<std::string> args = argv;
  auto c_args = c_array(args);
  std::vector<std::string> env = merged_env(options.env_set);
  auto c_env = c_array(env);

  pid_t pid = -1;
  int rc = argv[0].find('/') == std::string::npos
               ? posix_spawnp(&pid, argv[0].c_str(), &actions, &attr, c_args.data(), c_env.data())
               : posix_spawn(&pid, argv[0].c_str(), &actions, &attr, c_args.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return make_error("cannot start " + argv[0] + ": " + std::strerror(rc), rc);

  in.close_end(0);
  out.close_end(1);
  err.close_end(1);

  std::string stdin_data = options.stdin_data.value_or("");
  std::size_t stdin_off = 0;
  if (stdin_data.empty()) in.close_end(1);
  else ::fcntl(in.fd[1], F_SETFL, O_NONBLOCK);

  RunResult result;
  const auto deadline = Clock::now() + options.deadline;
  char buf[16384];
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd fds[3];
    int n = 0;
    int out_idx = -1, err_idx = -1, in_idx = -1;
    if (out.fd[0] >= 0) { fds[n] = {out.fd[0], POLLIN, 0}; out_idx = n++; }
    if (err.fd[0] >= 0) { fds[n] = {err.fd[0], POLLIN, 0}; err_idx = n++; }
    if (in.fd[1] >= 0) { fds[n] = {in.fd[1], POLLOUT, 0}; in_idx = n++; }
    int pr = ::poll(fds, n, static_cast<int>(std::min<long>(left.count(), 1000)));
    if (pr < 0) {
      if (errno == EINTR) continue;
      break;
    }
    auto drain = [&](int idx, Pipe& p, std::string& dst, bool& trunc) {
      if (idx < 0 || !(fds[idx].revents & (POLLIN | POLLHUP | POLLERR))) return;
      ssize_t got = ::read(p.fd[0], buf, sizeof buf);
      if (got > 0) append_bounded(dst, buf, static_cast<std::size_t>(got), options.max_output, trunc);
      else if (got == 0 || (errno != EINTR && errno != EAGAIN)) p.close_end(0);
    };
    drain(out_idx, out, result.out, result.out_truncated);
    drain(err_idx, err, result.err, result.err_truncated);
    if (in_idx >= 0 && (fds[in_idx].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t put = ::write(in.fd[1], stdin_data.data() + stdin_off, stdin_data.size() - stdin_off);
      if (put > 0) stdin_off += static_cast<std::size_t>(put);
      if (put < 0 && errno != EAGAIN && errno != EINTR) in.close_end(1);
      if (stdin_off >= stdin_data.size()) in.close_end(1);
    }
  }
  in.close_end(1);

  int status = 0;
  if (result.timed_out) {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  } else {
    // Output closed; the child may still be running (it closed its stdout). Wait for it
    // until the deadline, polling so the deadline holds.
    for (;;) {
      pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid) break;
      if (w < 0 && errno != EINTR) break;
      if (Clock::now() >= deadline) {
        result.timed_out = true;
        ::kill(pid, SIGKILL);
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  if (WIFEXITED(status)) {
    result.exited = true;
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
  }
  return result;
}

Expected<pid_t> spawn_detached(const std::vector<std::string>& argv, const std::string& log_path,
                               const std::map<std::string, std::string>& env_set) {
  ISOHARNESS_CHECK(!argv.empty());
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  const char* log = log_path.empty() ? "/dev/null" : log_path.c_str();
  posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);

  posix_spawnattr_t attr;
  init_child_signals(&attr);
  // Own process group: a Ctrl-C at the terminal reaches the harness, which then tears
  // its children down in order, instead of reaching every child at once.
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, kChildSignalFlags | POSIX_SPAWN_SETPGROUP);

  std::vector<std::string> args = argv;
  auto c_args = c_array(args);
  std::vector<std::string> env = merged_env(env_set);
  auto c_env = c_array(env);
  pid_t pid = -1;
  int rc = argv[0].find('/') == std::string::npos
               ? posix_spawnp(&pid, argv[0].c_str(), &actions, &attr, c_args.data(), c_env.data())
               : posix_spawn(&pid, argv[0].c_str(), &actions, &attr, c_args.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return make_error("cannot start " + argv[0] + ": " + std::strerror(rc), rc);
  return pid;
}

void terminate_process(pid_t pid, std::chrono::milliseconds grace) {
  if (pid <= 0) return;
  if (::kill(pid, SIGTERM) != 0) {
    int status;
    ::waitpid(pid, &status, WNOHANG);
    return;
  }
  const auto until = Clock::now() + grace;
  for (;;) {
    int status;
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) return;
    if (w < 0 && errno == ECHILD) {
      // Not our child: it is gone when kill(pid, 0) fails.
      if (::kill(pid, 0) != 0) return;
    }
    if (Clock::now() >= until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  int status;
  ::waitpid(pid, &status, 0);
}

std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of(
                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,@+%") ==
                           std::string::npos) {
    return word;
  }
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  out += "'";
  return out;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& w : argv) {
    if (!out.empty()) out += ' ';
    out += shell_quote(w);
  }
  return out;
}

std::string render_argv(const std::vector<std::string>& argv) { return shell_join(argv); }

}  // namespace isoharness
