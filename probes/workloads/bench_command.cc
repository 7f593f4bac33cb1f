// `isoprobe bench [--list] [--workloads a,b,c] [--min-time S] [--repetitions N]
//                 [--scratch DIR] [--benchmark_* …]`
//
// Registers the chosen workloads with Google Benchmark and runs them; Google Benchmark
// writes the report (the harness passes --benchmark_format=json). A workload the image
// cannot run is still registered: it reports "skipped: <reason>" as its error message and
// the reason also appears in the JSON context as "isoprobe_skipped.<name>". Files go to a
// private directory made under --scratch (default $TMPDIR, else /tmp), removed at the end.
#include <signal.h>
#include <stdlib.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "workloads/bench.h"
#include "workloads/registry.h"

namespace isoprobe {

namespace {

using workloads::Workload;

constexpr double kDefaultMinTime = 0.05;  // seconds per workload and repetition
constexpr const char* kUsage =
    "usage: isoprobe bench [--list] [--workloads a,b,c] [--min-time SECONDS] [--repetitions N]\n"
    "                      [--scratch DIR] [--benchmark_* flags of Google Benchmark]\n";

struct BenchArgs {
  bool list = false;
  bool help = false;
  std::vector<std::string> names;  // empty: every workload
  std::string min_time;            // as given; empty: default
  std::string repetitions;
  std::string scratch_base;
  std::vector<std::string> passthrough;  // --benchmark_* flags, in order
};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// The values parse_args collected: workload names known, the numbers in range.
void check_values(const std::string* workloads, BenchArgs& out, std::vector<std::string>& problems) {
  if (workloads) {
    for (const auto& name : split_commas(*workloads)) {
      if (name.empty()) {
        problems.push_back("--workloads: empty name in '" + *workloads + "'");
      } else if (workloads::find_workload(name) == nullptr) {
        problems.push_back("--workloads: unknown workload '" + name + "' (see isoprobe bench --list)");
      } else {
        out.names.push_back(name);
      }
    }
  }
  if (!out.min_time.empty()) {
    char* end = nullptr;
    double seconds = std::strtod(out.min_time.c_str(), &end);
    if (end == out.min_time.c_str() || *end != '\0' || !(seconds > 0) || seconds > 60) {
      problems.push_back("--min-time: '" + out.min_time + "' is not a number of seconds in (0, 60]");
    }
  }
  if (!out.repetitions.empty()) {
    char* end = nullptr;
    long n = std::strtol(out.repetitions.c_str(), &end, 10);
    if (end == out.repetitions.c_str() || *end != '\0' || n < 1 || n > 1000) {
      problems.push_back("--repetitions: '" + out.repetitions + "' is not a whole number in [1, 1000]");
    }
  }
}

// Parses our own flags; collects every problem. Returns false (after printing them) on
// bad usage.
bool parse_args(int argc, char** argv, BenchArgs& out) {
  std::vector<std::string> problems;
  auto value_of = [&](int& i, const std::string& arg, const std::string& flag, std::string& into) {
    if (arg.rfind(flag + "=", 0) == 0) {
      into = arg.substr(flag.size() + 1);
    } else if (i + 1 < argc) {
      into = argv[++i];
    } else {
      problems.push_back(flag + ": missing value");
    }
  };
  std::string workloads;
  bool workloads_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto is = [&](const std::string& flag) { return arg == flag || arg.rfind(flag + "=", 0) == 0; };
    if (arg == "--list") {
      out.list = true;
    } else if (arg == "--help" || arg == "-h") {
      out.help = true;
    } else if (is("--workloads")) {
      value_of(i, arg, "--workloads", workloads);
      workloads_given = true;
    } else if (is("--min-time")) {
      value_of(i, arg, "--min-time", out.min_time);
    } else if (is("--repetitions")) {
      value_of(i, arg, "--repetitions", out.repetitions);
    } else if (is("--scratch")) {
      value_of(i, arg, "--scratch", out.scratch_base);
    } else if (arg.rfind("--benchmark_", 0) == 0) {
      out.passthrough.push_back(arg);
    } else {
      problems.push_back("unknown argument '" + arg + "'");
    }
  }
  check_values(workloads_given ? &workloads : nullptr, out, problems);
  for (const auto& p : problems) std::fprintf(stderr, "isoprobe bench: %s\n", p.c_str());
  if (!problems.empty()) std::fputs(kUsage, stderr);
  return problems.empty();
}

// The private scratch directory of this run, removed (with everything in it) at the end.
class ScratchDir {
 public:
  ~ScratchDir() {
    if (path_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  // Creates <base>/isoprobe-bench-XXXXXX; returns an error message on failure.
  std::optional<std::string> create(std::string base) {
    if (base.empty()) {
      const char* tmpdir = std::getenv("TMPDIR");
      base = (tmpdir && *tmpdir) ? tmpdir : "/tmp";
    }
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(base, ec);
    if (ec) return "scratch directory " + base + ": " + ec.message();
    std::string pattern = (absolute / "isoprobe-bench-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      return "cannot create a scratch directory in " + absolute.string() + ": " + std::strerror(errno);
    }
    path_ = pattern;
    return std::nullopt;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void print_list(const std::vector<const Workload*>& chosen,
                const std::map<std::string, std::string>& skipped) {
  nlohmann::json list = nlohmann::json::array();
  for (const Workload* w : chosen) {
    auto reason = skipped.find(std::string(w->name));
    nlohmann::json item = {
        {"name", w->name},
        {"family", w->family},
        {"description", w->description},
        {"available", reason == skipped.end()},
        {"skip_reason", reason == skipped.end() ? nlohmann::json(nullptr) : nlohmann::json(reason->second)},
    };
    if (w->fixed_iterations > 0) {
      item["iterations"] = w->fixed_iterations;
    } else {
      item["iterations"] = "auto";
    }
    list.push_back(std::move(item));
  }
  nlohmann::json doc = {{"schema", "isoprobe.workloads/v1"}, {"workloads", std::move(list)}};
  std::printf("%s\n", doc.dump(2).c_str());
}

// The workloads to run: those named (each once, in order), else every registered one.
std::vector<const Workload*> chosen_workloads(const BenchArgs& args) {
  std::vector<const Workload*> chosen;
  if (args.names.empty()) {
    for (const Workload* w : workloads::registered_workloads()) chosen.push_back(w);
    return chosen;
  }
  for (const auto& name : args.names) {
    const Workload* w = workloads::find_workload(name);
    bool seen = false;
    for (const Workload* c : chosen) seen = seen || c == w;
    if (!seen) chosen.push_back(w);
  }
  return chosen;
}

// Google Benchmark's argv: our default minimum time unless given, the passed-through flags,
// then our own --min-time and --repetitions.
std::vector<std::string> benchmark_flags(const BenchArgs& args) {
  std::vector<std::string> flags = {"isoprobe bench"};
  bool user_min_time = false;
  for (const auto& f : args.passthrough)
    user_min_time = user_min_time || f.rfind("--benchmark_min_time", 0) == 0;
  if (!user_min_time && args.min_time.empty())
    flags.push_back("--benchmark_min_time=" + std::to_string(kDefaultMinTime));
  flags.insert(flags.end(), args.passthrough.begin(), args.passthrough.end());
  if (!args.min_time.empty()) flags.push_back("--benchmark_min_time=" + args.min_time);
  if (!args.repetitions.empty()) flags.push_back("--benchmark_repetitions=" + args.repetitions);
  return flags;
}

// One benchmark per workload; a skipped one reports its reason as the benchmark's error.
void register_workloads(const std::vector<const Workload*>& chosen,
                        const std::map<std::string, std::string>& skipped, const workloads::Env& env) {
  for (const Workload* w : chosen) {
    auto reason = skipped.find(std::string(w->name));
    std::string skip = reason == skipped.end() ? "" : "skipped: " + reason->second;
    auto* b =
        benchmark::RegisterBenchmark(std::string(w->name).c_str(), [w, &env, skip](benchmark::State& state) {
          if (!skip.empty()) {
            state.SkipWithError(skip.c_str());
            for (auto _ : state) {
            }
            return;
          }
          w->run(state, env);
        });
    b->UseRealTime();
    if (w->fixed_iterations > 0) b->Iterations(w->fixed_iterations);
  }
}

}  // namespace

int run_bench(int argc, char** argv) {
  if (auto problem = workloads::registry_problem(workloads::registered_workloads())) {
    std::fprintf(stderr, "isoprobe bench: internal error in the workload registry: %s\n", problem->c_str());
    return 3;
  }
  BenchArgs args;
  if (!parse_args(argc, argv, args)) return 2;
  if (args.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  // Round trips write to a peer that may have gone; that must be an error, not a signal.
  ::signal(SIGPIPE, SIG_IGN);

  const std::vector<const Workload*> chosen = chosen_workloads(args);

  ScratchDir scratch;
  if (auto problem = scratch.create(args.scratch_base)) {
    std::fprintf(stderr, "isoprobe bench: %s\n", problem->c_str());
    return 3;
  }
  const workloads::Env env{scratch.path()};
  std::map<std::string, std::string> skipped;
  for (const Workload* w : chosen) {
    if (w->check == nullptr) continue;
    if (auto reason = w->check(env)) skipped[std::string(w->name)] = *reason;
  }
  if (args.list) {
    print_list(chosen, skipped);
    return 0;
  }

  std::vector<std::string> flags = benchmark_flags(args);
  std::vector<char*> bench_argv;
  bench_argv.reserve(flags.size() + 1);
  for (auto& f : flags) bench_argv.push_back(f.data());
  bench_argv.push_back(nullptr);
  int bench_argc = static_cast<int>(flags.size());
  benchmark::Initialize(&bench_argc, bench_argv.data());
  if (benchmark::ReportUnrecognizedArguments(bench_argc, bench_argv.data())) return 2;

  std::string names;
  for (const Workload* w : chosen) names += (names.empty() ? "" : ",") + std::string(w->name);
  benchmark::AddCustomContext("isoprobe_bench", "isoprobe.bench/v1");
  benchmark::AddCustomContext("isoprobe_workloads", names);
  benchmark::AddCustomContext("isoprobe_scratch", env.scratch);
  for (const auto& [name, reason] : skipped) benchmark::AddCustomContext("isoprobe_skipped." + name, reason);

  register_workloads(chosen, skipped, env);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace isoprobe
