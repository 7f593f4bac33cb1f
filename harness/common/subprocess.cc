// Other programs, started with Boost.Process (v1, Boost 1.74) the way FIELD-NOTES.md's
// recipe has it, which held for mixed jobs from many threads at once:
// - one io_context per call; stdout/stderr into async pipes read with bounded
//   async_read_some; bp::on_exit reaps; never child::wait_for (late, and crashes when
//   several threads use it);
// - the child gets its own process group, no blocked signals, default actions for the
//   signals the harness handles, and every inherited descriptor above stderr marked
//   close-on-exec (Boost's pipes are not, so children started by other threads at the same
//   moment would hold ours open);
// - a deadline timer and the output cap both kill the whole group (a background grandchild
//   included), and so does the child's exit, since a grandchild may still hold the pipe.
// terminate_process stays on kill/waitpid: it is given a bare pid (possibly not our
// child), which Boost.Process has no handle for.
#include "harness/common/subprocess.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/process/args.hpp>
#include <boost/process/async.hpp>
#include <boost/process/async_pipe.hpp>
#include <boost/process/child.hpp>
#include <boost/process/env.hpp>
#include <boost/process/environment.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/io.hpp>
#include <boost/process/search_path.hpp>
#include <boost/process/start_dir.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>

#include "harness/common/log.h"

namespace isoharness {
namespace {

namespace bp = boost::process;
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

// In the child, between fork and exec (async-signal-safe calls only).
struct ChildSetup : bp::extend::handler {
  template <class Executor>
  void on_exec_setup(Executor&) const {
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP}) ::signal(sig, SIG_DFL);
    ::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
  }
};

// The program to execute: argv[0] as given when it names a path, else found in PATH.
Expected<boost::filesystem::path> program_path(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), X_OK) != 0)
      return make_error("cannot start " + name + ": " + std::strerror(errno), errno);
    return boost::filesystem::path(name);
  }
  auto found = bp::search_path(name);
  if (found.empty()) return make_error("cannot start " + name + ": " + std::strerror(ENOENT), ENOENT);
  return found;
}

bp::environment child_environment(const std::map<std::string, std::string>& env_set) {
  bp::environment env = boost::this_process::environment();
  // set(), not operator[]: Boost 1.74's environment::find compares key + '=' with each
  // entry over the key's length without checking the entry's, reading past the end of a
  // shorter entry (AddressSanitizer, plan_cli_test). The implementation's set() checks.
  for (const auto& [k, v] : env_set) env.set(k, v);
  return env;
}

// One output stream read into `dst` up to `cap` bytes, then `done()`. Passing the cap
// kills the group and closes the pipe: a child printing without end must not keep us
// reading.
class BoundedReader {
 public:
  BoundedReader(bp::async_pipe& pipe, std::string& dst, bool& truncated, std::size_t cap, pid_t group,
                std::function<void()> done)
      : pipe_(pipe), dst_(dst), truncated_(truncated), cap_(cap), group_(group), done_(std::move(done)) {}

  void start() {
    // One byte beyond the cap is asked for, so passing it is seen.
    const std::size_t room = std::min(buf_.size(), left() + 1);
    pipe_.async_read_some(asio::buffer(buf_.data(), room),
                          [this](const boost::system::error_code& ec, std::size_t n) {
                            const std::size_t keep = std::min(n, left());
                            dst_.append(buf_.data(), keep);
                            if (keep < n) {
                              truncated_ = true;
                              ::killpg(group_, SIGKILL);
                              pipe_.close();
                              done_();
                            } else if (ec) {
                              done_();  // EOF, or the pipe closed under us
                            } else {
                              start();
                            }
                          });
  }

 private:
  std::size_t left() const { return cap_ - std::min(cap_, dst_.size()); }

  bp::async_pipe& pipe_;
  std::string& dst_;
  bool& truncated_;
  std::size_t cap_;
  pid_t group_;
  std::function<void()> done_;
  std::array<char, 16384> buf_{};
};

void set_status(RunResult& result, int status) {
  if (WIFEXITED(status)) {
    result.exited = true;
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
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
  auto exe = program_path(argv[0]);
  if (!exe) return exe.error();
  asio::io_context ioc;
  bp::async_pipe out(ioc), err(ioc), in(ioc);
  asio::steady_timer deadline(ioc, options.deadline);
  RunResult result;
  // The exit and each stream read to its end; the deadline stops waiting when all are in.
  int pending = options.merge_stderr ? 2 : 3;
  auto one_done = [&] {
    if (--pending == 0) {
      deadline.cancel();
      in.close();
    }
  };
  pid_t group = -1;
  std::error_code ec;
  const std::vector<std::string> args(argv.begin() + 1, argv.end());
  const std::string cwd = options.cwd.value_or(".");
  auto on_exit = bp::on_exit([&](int, const std::error_code&) {
    if (group > 0) ::killpg(group, SIGKILL);  // grandchildren may still hold the pipes
    one_done();
  });
  bp::child child = options.merge_stderr
                        ? bp::child(bp::exe = exe->string(), bp::args = args,
                                    bp::std_in<in, (bp::std_out & bp::std_err)> out, bp::start_dir = cwd,
                                    child_environment(options.env_set), on_exit, ioc, ChildSetup{}, ec)
                        : bp::child(bp::exe = exe->string(), bp::args = args, bp::std_in<in, bp::std_out> out,
                                    bp::std_err > err, bp::start_dir = cwd,
                                    child_environment(options.env_set), on_exit, ioc, ChildSetup{}, ec);
  if (ec) return make_error("cannot start " + argv[0] + ": " + ec.message(), ec.value());
  group = child.id();
  const auto started = Clock::now();
  log::get().debug("run [{}] {}", group, render_argv(argv));

  deadline.async_wait([&](const boost::system::error_code& cancelled) {
    if (cancelled) return;
    result.timed_out = true;
    ::killpg(group, SIGKILL);
    out.close();  // a grandchild that left the group may hold them open
    err.close();
    in.close();
  });
  const std::string stdin_data = options.stdin_data.value_or("");
  if (stdin_data.empty()) {
    in.close();
  } else {
    asio::async_write(in, asio::buffer(stdin_data),
                      [&](const boost::system::error_code&, std::size_t) { in.close(); });
  }
  BoundedReader out_reader(out, result.out, result.out_truncated, options.max_output, group, one_done);
  BoundedReader err_reader(err, result.err, result.err_truncated, options.max_output, group, one_done);
  out_reader.start();
  if (options.merge_stderr)
    err.close();
  else
    err_reader.start();
  ioc.run();
  set_status(result, child.native_exit_code());
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  if (result.timed_out) {
    log::get().info("run [{}] {}: timed out after {} ms, process group killed", group, argv[0], ms);
  } else {
    log::get().debug("run [{}] {}: {} in {} ms{}", group, argv[0], result.ok() ? "exit 0" : result.describe(),
                     ms, result.out_truncated || result.err_truncated ? ", output cut at the cap" : "");
  }
  return result;
}

Expected<pid_t> spawn_detached(const std::vector<std::string>& argv, const std::string& log_path,
                               const std::map<std::string, std::string>& env_set) {
  ISOHARNESS_CHECK(!argv.empty());
  auto exe = program_path(argv[0]);
  if (!exe) return exe.error();
  const char* log = log_path.empty() ? "/dev/null" : log_path.c_str();
  const int fd = ::open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return make_error("cannot open " + std::string(log) + ": " + std::strerror(errno), errno);
  std::unique_ptr<FILE, int (*)(FILE*)> file(::fdopen(fd, "a"), &std::fclose);
  if (!file) {
    ::close(fd);
    return make_error("cannot open " + std::string(log) + ": " + std::strerror(errno), errno);
  }
  // Its own process group (ChildSetup): a Ctrl-C at the terminal reaches the harness, which
  // then tears its children down in order, instead of reaching every child at once.
  std::error_code ec;
  bp::child child(bp::exe = exe->string(), bp::args = std::vector<std::string>(argv.begin() + 1, argv.end()),
                  bp::std_in<bp::null, (bp::std_out & bp::std_err)> file.get(), child_environment(env_set),
                  ChildSetup{}, ec);
  if (ec) return make_error("cannot start " + argv[0] + ": " + ec.message(), ec.value());
  child.detach();  // the caller owns it: terminate_process or waitpid reaps it
  log::get().debug("spawn [{}] {} (output to {})", child.id(), render_argv(argv), log);
  return child.id();
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
