// Task-like family: what an agent's work looks like from outside, using the image's own
// tools: compile a small C file, run a short shell pipeline, start an interpreter. Each
// tool is found by searching PATH here (absolute path, fixed argv, no shell string built
// from input); when the image lacks it the workload is skipped and says which tool.
// Each child runs under a 30 s watchdog and with a fixed, small iteration count.
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>

#include "workloads/child_process.h"
#include "workloads/registry.h"

namespace isoprobe::workloads {

namespace {

constexpr std::chrono::milliseconds kChildLimit{30000};

constexpr std::array<const char*, 3> kCompilers = {"cc", "gcc", "clang"};

std::string find_compiler() {
  for (const char* name : kCompilers) {
    std::string path = find_in_path(name);
    if (!path.empty()) return path;
  }
  return {};
}

// Returns "<tool> not found in PATH" for the first of `tools` that is missing.
std::optional<std::string> missing_tool(std::initializer_list<const char*> tools) {
  for (const char* tool : tools) {
    if (find_in_path(tool).empty()) return std::string(tool) + " not found in PATH";
  }
  return std::nullopt;
}

// Times argv, one child per iteration. The first child that fails fails the workload
// (and the result is false).
bool time_children(benchmark::State& state, const std::vector<std::string>& argv) {
  ChildRunner runner(kChildLimit);
  for (auto _ : state) {
    if (auto problem = runner.run(argv)) {
      fail_with(state, *problem);
      return false;
    }
  }
  return true;
}

// Times `tool args...`, the tool found in PATH.
void time_tool(benchmark::State& state, const char* tool, std::vector<std::string> args) {
  const std::string path = find_in_path(tool);
  if (path.empty()) return fail_with(state, std::string(tool) + " not found in PATH");
  args.insert(args.begin(), path);
  time_children(state, args);
}

constexpr std::string_view kCSource = R"(#include <stddef.h>
struct point { double x, y; };
static double dot(const struct point* a, const struct point* b) { return a->x * b->x + a->y * b->y; }
double isoprobe_sum(const struct point* p, size_t n) {
  double total = 0;
  for (size_t i = 0; i + 1 < n; ++i) total += dot(&p[i], &p[i + 1]);
  return total;
}
int isoprobe_count_words(const char* s) {
  int words = 0, in_word = 0;
  for (; *s; ++s) {
    int space = *s == ' ' || *s == '\n' || *s == '\t';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}
)";

std::optional<std::string> check_compile_c(const Env&) {
  if (find_compiler().empty()) return "no C compiler (cc, gcc or clang) found in PATH";
  return std::nullopt;
}

void run_compile_c(benchmark::State& state, const Env& env) {
  const std::string compiler = find_compiler();
  if (compiler.empty()) return fail_with(state, "no C compiler found in PATH");
  const std::string source = env.scratch + "/compile_c.c";
  const std::string object = env.scratch + "/compile_c.o";
  int fd = ::open(source.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail_with_errno(state, "create " + source);
  bool written = ::write(fd, kCSource.data(), kCSource.size()) == static_cast<ssize_t>(kCSource.size());
  ::close(fd);
  if (!written) return fail_with_errno(state, "write " + source);
  // -pipe: no temporary files, so a read-only /tmp does not matter.
  if (!time_children(state, {compiler, "-c", "-O1", "-pipe", "-o", object, source})) return;
  ::unlink(object.c_str());
  ::unlink(source.c_str());
}

std::optional<std::string> check_shell_pipeline(const Env&) {
  return missing_tool({"sh", "sort", "head"});
}

void run_shell_pipeline(benchmark::State& state, const Env&) {
  time_tool(state, "sh", {"-c", "printf '%s\\n' 3 1 2 | sort | head -n 1"});
}

std::optional<std::string> check_interpreter_startup(const Env&) {
  return missing_tool({"python3"});
}

void run_interpreter_startup(benchmark::State& state, const Env&) {
  time_tool(state, "python3", {"-c", "pass"});
}

}  // namespace

const Workload kCompileC{
    .name = "compile_c",
    .family = "task_like",
    .description =
        "cc -c -O1 -pipe of a 20-line C file in the scratch directory (cc, gcc or clang from PATH)",
    .check = check_compile_c,
    .run = run_compile_c,
    .fixed_iterations = 3,
};

const Workload kShellPipeline{
    .name = "shell_pipeline",
    .family = "task_like",
    .description = "sh -c \"printf '%s\\n' 3 1 2 | sort | head -n 1\" (sh, sort, head from PATH)",
    .check = check_shell_pipeline,
    .run = run_shell_pipeline,
    .fixed_iterations = 5,
};

const Workload kInterpreterStartup{
    .name = "interpreter_startup",
    .family = "task_like",
    .description = "python3 -c pass: interpreter start-up and exit (python3 from PATH)",
    .check = check_interpreter_startup,
    .run = run_interpreter_startup,
    .fixed_iterations = 5,
};

}  // namespace isoprobe::workloads
