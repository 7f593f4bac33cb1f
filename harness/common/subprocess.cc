// Other programs, started with posix_spawn, as ninja (subprocess-posix.cc) and LLVM
// (Support/Unix/Program.inc) start theirs. glibc's posix_spawn shares the parent's memory
// until the exec (a vfork-style clone), so the harness's address space is neither copied
// nor torn down for each of the few thousand `ip`, `nft`, `runc` and `runsc` a local run
// starts (fork() copying and unmapping the page tables was a fifth of all CPU in a default
// local run). Why not Boost.Process: docs/CODING.md.
// - every descriptor above stderr is closed in the child before exec (so a child started
//   by another thread at the same moment never holds one of our pipes open);
// - the child gets its own process group, no blocked signals and every signal at its
//   default action, glibc's internal 32 and 33 included (every_signal);
// - one poll() loop per call waits for stdout, stderr, stdin and the child's pidfd at
//   once, up to the deadline; reads are bounded by the cap;
// - the deadline, the output cap and the child's own exit all kill the whole group (a
//   background grandchild included, which may still hold a pipe); the exit's kill is sent
//   before the child is reaped, while its group id cannot have been reused.
// terminate_process stays on kill/waitpid: it is given a bare pid, possibly not our child.
#include "harness/common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "harness/common/log.h"

extern char**
    environ;  // NOLINT(readability-redundant-declaration): unistd.h declares it only under _GNU_SOURCE

namespace isoharness {
namespace {

using Clock = std::chrono::steady_clock;

// A descriptor closed when it goes out of scope (or by close()).
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      close();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~Fd() { close(); }
  int get() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

Error errno_error(const std::string& what, int code) {
  return make_error(what + ": " + std::strerror(code), code);
}

// The program to execute: argv[0] as given when it names a path, else found in PATH.
Expected<std::string> program_path(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), X_OK) != 0) return errno_error("cannot start " + name, errno);
    return name;
  }
  const char* path = std::getenv("PATH");  // NOLINT(concurrency-mt-unsafe): the harness never sets PATH
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    std::string dir = dirs.substr(start, end - start);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return errno_error("cannot start " + name, ENOENT);
}

// Our environment with env_set added or replacing, as the "KEY=value" strings exec takes.
std::vector<std::string> child_environment(const std::map<std::string, std::string>& env_set) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string_view::npos && env_set.count(std::string(entry.substr(0, eq))) > 0) continue;
    env.emplace_back(entry);
  }
  for (const auto& [k, v] : env_set) env.push_back(k + "=" + v);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& words) {
  std::vector<char*> out;
  out.reserve(words.size() + 1);
  for (auto& w : words) out.push_back(w.data());
  out.push_back(nullptr);
  return out;
}

// Where the child's standard descriptors come from: a descriptor of ours to duplicate, or
// a path to open (for stdout and stderr, appended to and created).
struct StdioSource {
  int fd = -1;
  std::string path;
};

struct SpawnRequest {
  std::string program;
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::optional<std::string> cwd;
  std::array<StdioSource, 3> stdio;
};

// Every signal, glibc's two internal ones (32 and 33) included: sigfillset leaves those
// out, and posix_spawn then leaves them ignored in the child, where an ignored signal
// stays ignored through exec, through runc, into a container.
sigset_t every_signal() {
  sigset_t all;
  std::memset(&all, 0xff, sizeof all);
  return all;
}

// posix_spawn's attributes and file actions, destroyed with the call.
struct SpawnSetup {
  posix_spawnattr_t attr{};
  posix_spawn_file_actions_t actions{};
  SpawnSetup() {
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&actions);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
};

// The child's own process group, no blocked signal, every signal at its default action.
int set_child_attributes(posix_spawnattr_t& attr) {
  const sigset_t all = every_signal();
  sigset_t none;
  sigemptyset(&none);
  int rc = posix_spawnattr_setsigdefault(&attr, &all);
  if (rc == 0) rc = posix_spawnattr_setsigmask(&attr, &none);
  if (rc == 0) rc = posix_spawnattr_setpgroup(&attr, 0);
  if (rc == 0)
    rc = posix_spawnattr_setflags(&attr,
                                  POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  return rc;
}

// Stdio in order 0, 1, 2 (our sources sit above 2, so none is overwritten before it is
// duplicated), then every descriptor above stderr closed (so a child started by another
// thread at the same moment never holds one of our pipes open), then the directory.
int set_child_actions(posix_spawn_file_actions_t& actions, const SpawnRequest& request) {
  int rc = 0;
  for (int target = 0; target < 3 && rc == 0; ++target) {
    const StdioSource& source = request.stdio.at(static_cast<std::size_t>(target));
    const int flags = target == 0 ? O_RDONLY : (O_WRONLY | O_CREAT | O_APPEND);
    rc = source.fd >= 0
             ? posix_spawn_file_actions_adddup2(&actions, source.fd, target)
             : posix_spawn_file_actions_addopen(&actions, target, source.path.c_str(), flags, 0600);
  }
  if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  if (rc == 0 && request.cwd) rc = posix_spawn_file_actions_addchdir_np(&actions, request.cwd->c_str());
  return rc;
}

// Starts the child with posix_spawn (glibc's vfork-style child: the harness's address
// space is not copied, and glibc blocks every signal in the parent while the child runs).
// A failed exec or file action comes back as an error.
Expected<pid_t> spawn(SpawnRequest request) {
  auto argv = pointers(request.argv);
  auto envp = pointers(request.env);
  SpawnSetup setup;
  int rc = set_child_attributes(setup.attr);
  if (rc == 0) rc = set_child_actions(setup.actions, request);
  pid_t pid = -1;
  if (rc == 0)
    rc = ::posix_spawn(&pid, request.program.c_str(), &setup.actions, &setup.attr, argv.data(), envp.data());
  if (rc != 0) return errno_error("cannot start " + request.argv.front(), rc);
  return pid;
}

// Our descriptors for the child's stdio are kept above 2, so duplicating one onto 0, 1 or
// 2 in the child never overwrites another before it is read (the harness started with a
// standard descriptor closed would otherwise get one back from pipe2 or open).
Expected<Fd> above_stdio(int fd) {
  if (fd < 0) return errno_error("cannot open a descriptor", errno);
  Fd owned(fd);
  if (fd > 2) return owned;
  Fd moved(::fcntl(fd, F_DUPFD_CLOEXEC, 3));
  if (!moved.open()) return errno_error("cannot move a descriptor above stderr", errno);
  return moved;
}

struct Pipe {
  Fd read;
  Fd write;
};

Expected<Pipe> make_pipe() {
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) return errno_error("cannot create a pipe", errno);
  auto read_end = above_stdio(fds[0]);
  auto write_end = above_stdio(fds[1]);
  if (!read_end) return read_end.error();
  if (!write_end) return write_end.error();
  return Pipe{std::move(*read_end), std::move(*write_end)};
}

void set_status(RunResult& result, int status) {
  if (WIFEXITED(status)) {
    result.exited = true;
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
  }
}

// The child, from its start until it is reaped.
struct ChildWatch {
  pid_t pid = -1;
  Fd pidfd;  // readable once the child has exited; without pidfd_open, exits are polled
  bool reaped = false;
};

// Kills the child's group. After the reap it was already killed, and its id may be reused.
void kill_group(const ChildWatch& child) {
  if (!child.reaped) ::killpg(child.pid, SIGKILL);
}

bool has_exited(const ChildWatch& child) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(child.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == child.pid;
}

// The exit kills the group first (a grandchild may still hold the pipes), while the
// not-yet-reaped child keeps its group id from being reused.
void reap(ChildWatch& child, RunResult& result) {
  ::killpg(child.pid, SIGKILL);
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  set_status(result, status);
  child.reaped = true;
  child.pidfd.close();
}

// One output stream, read into `text` up to the cap. Passing the cap kills the group and
// closes the pipe: a child printing without end must not keep us reading.
struct Capture {
  Fd fd;
  std::string& text;
  bool& truncated;
};

// Returns how many bytes were kept.
std::size_t read_some(Capture& c, std::size_t cap, const ChildWatch& child) {
  std::array<char, 16384> buf{};
  const std::size_t left = cap - std::min(cap, c.text.size());
  // One byte beyond the cap is asked for, so passing it is seen.
  const ssize_t n = ::read(c.fd.get(), buf.data(), std::min(buf.size(), left + 1));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
  if (n <= 0) {
    c.fd.close();  // end of file, or an error that ends the stream as well
    return 0;
  }
  const auto got = static_cast<std::size_t>(n);
  const std::size_t keep = std::min(got, left);
  c.text.append(buf.data(), keep);
  if (keep < got) {
    c.truncated = true;
    kill_group(child);
    c.fd.close();
  }
  return keep;
}

// The child's stdin: written without blocking, then closed; a child that stops reading
// ends it (EPIPE, with SIGPIPE held off for the write so it cannot end the harness).
struct Feed {
  Fd fd;
  std::string_view data;
};

void write_some(Feed& feed) {
  sigset_t pipe_signal;
  sigset_t old_mask;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, &old_mask);
  const ssize_t n = ::write(feed.fd.get(), feed.data.data(), feed.data.size());
  const int error = errno;
  if (n < 0 && error == EPIPE) {
    const timespec now{};
    ::sigtimedwait(&pipe_signal, nullptr, &now);  // the SIGPIPE this write raised
  }
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (n > 0) feed.data.remove_prefix(static_cast<std::size_t>(n));
  if ((n < 0 && error != EINTR && error != EAGAIN) || feed.data.empty()) feed.fd.close();
}

int poll_timeout_ms(Clock::time_point until, bool polling_exit) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()).count();
  const long long bound = polling_exit ? 10 : left;
  return static_cast<int>(std::clamp<long long>(std::min<long long>(left, bound), 0, 60'000));
}

struct Waiting {
  ChildWatch child;
  Capture out;
  std::optional<Capture> err;
  Feed in;
};

// Ends the call before the child did (the deadline, or the caller's watch): its group is
// killed and the pipes closed (a grandchild that left the group may hold them open).
void stop_early(Waiting& w, RunResult& result) {
  kill_group(w.child);
  w.out.fd.close();
  if (w.err) w.err->fd.close();
  w.in.fd.close();
  if (!w.child.reaped) reap(w.child, result);
}

// Output just read, shown to the caller's watch; true when its answer stops the call.
bool watch_stops(const RunOptions& options, const Capture& c, bool is_stderr, std::size_t fresh,
                 RunResult& result) {
  if (!options.watch || fresh == 0) return false;
  result.stopped = options.watch(OutputSeen{is_stderr, c.text, fresh});
  return !result.stopped.empty();
}

// Waits for the exit and both streams' ends, up to the deadline (then the call stops early)
// or until the caller's watch asks to stop.
void wait_until_done(Waiting& w, const RunOptions& options, RunResult& result) {
  const auto until = Clock::now() + options.deadline;
  const auto streams_open = [&] { return w.out.fd.open() || (w.err && w.err->fd.open()); };
  while (!w.child.reaped || streams_open()) {
    if (Clock::now() >= until) {
      result.timed_out = true;
      stop_early(w, result);
      return;
    }
    std::array<pollfd, 4> fds{};
    std::array<int, 4> which{};
    std::size_t count = 0;
    const auto add = [&](const Fd& fd, short events, int tag) {
      if (!fd.open()) return;
      fds.at(count) = pollfd{fd.get(), events, 0};
      which.at(count++) = tag;
    };
    add(w.out.fd, POLLIN, 0);
    if (w.err) add(w.err->fd, POLLIN, 1);
    add(w.in.fd, POLLOUT, 2);
    if (!w.child.reaped) add(w.child.pidfd, POLLIN, 3);
    const bool polling_exit = !w.child.reaped && !w.child.pidfd.open();
    if (::poll(fds.data(), count, poll_timeout_ms(until, polling_exit)) < 0) {
      if (errno != EINTR)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));  // bounded by the deadline
      continue;
    }
    for (std::size_t i = 0; i < count; ++i) {
      if (fds.at(i).revents == 0) continue;
      bool stop = false;
      switch (which.at(i)) {
        case 0:
          stop = watch_stops(options, w.out, false, read_some(w.out, options.max_output, w.child), result);
          break;
        case 1:
          stop = watch_stops(options, *w.err, true, read_some(*w.err, options.max_output, w.child), result);
          break;
        case 2:
          write_some(w.in);
          break;
        default:
          reap(w.child, result);
          break;
      }
      if (stop) {
        stop_early(w, result);
        return;
      }
    }
    if (polling_exit && has_exited(w.child)) reap(w.child, result);
  }
}

}  // namespace

std::string RunResult::describe() const {
  std::string what;
  if (!stopped.empty()) {
    what = "stopped: " + stopped;
  } else if (timed_out) {
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
  auto exe = program_path(argv[0]);
  if (!exe) return exe.error();
  RunResult result;
  auto out = make_pipe();
  if (!out) return out.error();
  std::optional<Pipe> err;
  if (!options.merge_stderr) {
    auto made = make_pipe();
    if (!made) return made.error();
    err = std::move(*made);
  }
  const std::string stdin_data = options.stdin_data.value_or("");
  std::optional<Pipe> in;
  if (!stdin_data.empty()) {
    auto made = make_pipe();
    if (!made) return made.error();
    in = std::move(*made);
    ::fcntl(in->write.get(), F_SETFL, O_NONBLOCK);  // our end only: the child's end is its own
  }
  SpawnRequest request{*exe, argv, child_environment(options.env_set), options.cwd, {}};
  request.stdio[0] = in ? StdioSource{in->read.get(), {}} : StdioSource{-1, "/dev/null"};
  request.stdio[1] = StdioSource{out->write.get(), {}};
  request.stdio[2] = StdioSource{err ? err->write.get() : out->write.get(), {}};
  auto pid = spawn(std::move(request));
  if (!pid) return pid.error();
  const auto started = Clock::now();
  log::get().debug("run [{}] {}", *pid, render_argv(argv));
  Waiting w{ChildWatch{*pid, Fd(static_cast<int>(::syscall(SYS_pidfd_open, *pid, 0))), false},
            Capture{std::move(out->read), result.out, result.out_truncated}, std::nullopt,
            Feed{in ? std::move(in->write) : Fd(), stdin_data}};
  out->write.close();  // the child has its own copies now
  if (err) {
    w.err.emplace(Capture{std::move(err->read), result.err, result.err_truncated});
    err->write.close();
  }
  if (in) in->read.close();
  wait_until_done(w, options, result);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  if (result.timed_out) {
    log::get().info("run [{}] {}: timed out after {} ms, process group killed", *pid, argv[0], ms);
  } else if (!result.stopped.empty()) {
    log::get().info("run [{}] {}: stopped after {} ms ({}), process group killed", *pid, argv[0], ms,
                    result.stopped);
  } else {
    log::get().debug("run [{}] {}: {} in {} ms{}", *pid, argv[0], result.ok() ? "exit 0" : result.describe(),
                     ms, result.out_truncated || result.err_truncated ? ", output cut at the cap" : "");
  }
  return result;
}

Expected<pid_t> spawn_detached(const std::vector<std::string>& argv, const std::string& log_path,
                               const std::map<std::string, std::string>& env_set, int stdout_fd) {
  ISOHARNESS_CHECK(!argv.empty());
  auto exe = program_path(argv[0]);
  if (!exe) return exe.error();
  const std::string log = log_path.empty() ? "/dev/null" : log_path;
  auto fd = above_stdio(::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  if (!fd) return errno_error("cannot open " + log, fd.error().code);
  // Its own process group: a Ctrl-C at the terminal reaches the harness, which then tears
  // its children down in order, instead of reaching every child at once.
  Fd out;  // a caller's descriptor at 0-2 is copied above them first (above_stdio)
  if (stdout_fd >= 0 && stdout_fd <= 2) {
    out = Fd(::fcntl(stdout_fd, F_DUPFD_CLOEXEC, 3));
    if (!out.open()) return errno_error("cannot start " + argv[0] + ": its stdout", errno);
  }
  const int stdout_source = out.open() ? out.get() : stdout_fd;
  SpawnRequest request{*exe, argv, child_environment(env_set), std::nullopt, {}};
  request.stdio = {StdioSource{-1, "/dev/null"},
                   StdioSource{stdout_source >= 0 ? stdout_source : fd->get(), {}},
                   StdioSource{fd->get(), {}}};
  auto pid = spawn(std::move(request));
  if (!pid) return pid.error();
  log::get().debug("spawn [{}] {} (output to {})", *pid, render_argv(argv), log);
  return *pid;  // the caller owns it: terminate_process or waitpid reaps it
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
  if (!word.empty() &&
      word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,@+%") ==
          std::string::npos) {
    return word;
  }
  std::string out = "'";
  for (char c : word) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
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

std::string render_argv(const std::vector<std::string>& argv) {
  return shell_join(argv);
}

}  // namespace isoharness
