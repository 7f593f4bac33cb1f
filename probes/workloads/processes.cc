// Process family: creating a process (fork, the child exits at once, the parent waits)
// and starting a program (posix_spawn + exec of a 129-byte static program that exits at
// once, written to the scratch directory, so the figure does not depend on the image).
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "workloads/child_process.h"
#include "workloads/registry.h"

namespace isoprobe::workloads {

namespace {

void run_fork_wait(benchmark::State& state, const Env&) {
  for (auto _ : state) {
    pid_t pid = ::fork();
    if (pid < 0) return fail_with_errno(state, "fork");
    if (pid == 0) ::_exit(0);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) return fail_with_errno(state, "waitpid");
    }
  }
}

// Starts `path` once and waits; an error message unless it exited with 0.
std::optional<std::string> spawn_once(const std::string& path) {
  char* argv[] = {const_cast<char*>(path.c_str()), nullptr};
  char* envp[] = {nullptr};
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, path.c_str(), nullptr, nullptr, argv, envp);
  if (rc != 0) return "posix_spawn " + path + ": " + std::strerror(rc);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return std::string("waitpid: ") + std::strerror(errno);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return path + " did not exit with status 0";
  return std::nullopt;
}

std::optional<std::string> check_spawn_exec(const Env& env) {
  std::string path = env.scratch + "/tiny_exit_check";
  if (auto problem = write_tiny_exit_program(path)) return "cannot write the test program: " + *problem;
  auto problem = spawn_once(path);
  ::unlink(path.c_str());
  if (problem) return "cannot execute a program from the scratch directory: " + *problem;
  return std::nullopt;
}

void run_spawn_exec(benchmark::State& state, const Env& env) {
  const std::string path = env.scratch + "/tiny_exit";
  if (auto problem = write_tiny_exit_program(path)) return fail_with(state, *problem);
  char* argv[] = {const_cast<char*>(path.c_str()), nullptr};
  char* envp[] = {nullptr};
  for (auto _ : state) {
    pid_t pid = 0;
    int rc = ::posix_spawn(&pid, path.c_str(), nullptr, nullptr, argv, envp);
    if (rc != 0) {
      errno = rc;
      ::unlink(path.c_str());
      return fail_with_errno(state, "posix_spawn");
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) return fail_with_errno(state, "waitpid");
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ::unlink(path.c_str());
      return fail_with(state, "the spawned program did not exit with status 0");
    }
  }
  ::unlink(path.c_str());
}

}  // namespace

const Workload kForkWait{
    .name = "fork_wait",
    .family = "processes",
    .description = "fork; the child _exits at once; the parent waits for it",
    .run = run_fork_wait,
};

const Workload kSpawnExec{
    .name = "spawn_exec",
    .family = "processes",
    .description =
        "posix_spawn of a tiny static program (exit_group(0) only) from the scratch directory, then wait",
    .check = check_spawn_exec,
    .run = run_spawn_exec,
};

}  // namespace isoprobe::workloads
