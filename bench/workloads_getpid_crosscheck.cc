// The getpid cross-check: is isoprobe's getpid figure under runsc/runc the same ratio an
// independent program sees? In each round, in a shuffled runtime order (interleaved, never
// all of one runtime first), it runs directly under runc and under runsc-ptrace
// (--network=none): the static C loop bench/getpid_static.c, then
// `isoprobe bench --workloads getpid`. It prints the medians, both runsc/runc ratios and
// how well they agree, plus the host figures for reference.
//
//   workloads_getpid_crosscheck [--rounds N (default 5)] [--ms MILLISECONDS (default 200)]
//
// --ms is both the static loop's measuring time and isoprobe's --min-time, so the two
// measure for about as long.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "harness/common/median.h"
#include "harness/common/subprocess.h"
#include "tests/system/workloads_container.h"

using namespace isoharness;
using isoharness::workloads_test::OciBundle;

namespace {

// "<ns per call> <calls>" from getpid_static.
double parse_static(const RunResult& r) {
  if (!r.ok()) return -1;
  return std::strtod(r.out.c_str(), nullptr);
}

// real_time of the getpid entry in isoprobe's Google Benchmark JSON.
double parse_isoprobe(const RunResult& r) {
  if (!r.ok()) return -1;
  auto doc = nlohmann::json::parse(r.out, nullptr, false);
  if (doc.is_discarded()) return -1;
  for (const auto& b : doc.value("benchmarks", nlohmann::json::array())) {
    std::string name = b.value("name", "");
    if (name.substr(0, name.find('/')) == "getpid" && !b.value("error_occurred", false)) {
      return b.value("real_time", -1.0);
    }
  }
  return -1;
}

double measure(const Expected<RunResult>& r, double (*parse)(const RunResult&), const std::string& what) {
  if (!r) {
    std::fprintf(stderr, "%s: cannot start: %s\n", what.c_str(), r.error().message.c_str());
    return -1;
  }
  double value = parse(*r);
  if (value <= 0)
    std::fprintf(stderr, "%s failed: %s\n%s\n", what.c_str(), r->describe().c_str(), r->err.c_str());
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  std::string ms = "200";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--rounds")
      rounds = std::clamp(std::atoi(argv[i + 1]), 1, 50);
    else if (flag == "--ms")
      ms = std::to_string(std::clamp(std::atoi(argv[i + 1]), 10, 5000));
  }
  if (::geteuid() != 0) {
    std::fprintf(stderr, "workloads_getpid_crosscheck: needs root (runc, runsc)\n");
    return 3;
  }
  const std::string isoprobe = workloads_test::isoprobe_path(ISOHARNESS_BINARY_DIR);
  const std::string getpid_static = GETPID_STATIC_PATH;
  if (isoprobe.empty()) {
    std::fprintf(stderr, "isoprobe is not built under %s/probes\n", ISOHARNESS_BINARY_DIR);
    return 3;
  }
  namespace fs = std::filesystem;
  OciBundle bundle({{fs::path(isoprobe).parent_path().string(), "/opt/isoprobe"},
                    {fs::path(getpid_static).parent_path().string(), "/opt/getpid"}});
  const std::vector<std::string> static_args = {"/opt/getpid/" + fs::path(getpid_static).filename().string(),
                                                ms};
  const std::vector<std::string> isoprobe_args = {"/opt/isoprobe/isoprobe",
                                                  "bench",
                                                  "--workloads",
                                                  "getpid",
                                                  "--min-time",
                                                  std::to_string(std::stoi(ms) / 1000.0),
                                                  "--benchmark_format=json"};
  const auto deadline = std::chrono::seconds(120);
  std::printf("isoprobe: %s\ngetpid_static: %s\nrunsc: --platform=ptrace --network=none\n", isoprobe.c_str(),
              getpid_static.c_str());

  std::map<std::string, std::vector<double>> static_ns, isoprobe_ns;
  std::mt19937 rng(std::random_device{}());
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::string> order = {"host", "runc", "runsc"};
    std::shuffle(order.begin(), order.end(), rng);
    for (const auto& where : order) {
      double s = 0, b = 0;
      if (where == "host") {
        auto sr = run_command({getpid_static, ms}, RunOptions{.deadline = deadline});
        s = measure(sr, parse_static, "host getpid_static");
        std::vector<std::string> args = isoprobe_args;
        args[0] = isoprobe;
        b = measure(run_command(args, RunOptions{.deadline = deadline}), parse_isoprobe, "host isoprobe");
      } else {
        s = measure(bundle.run(where, static_args, deadline), parse_static, where + " getpid_static");
        b = measure(bundle.run(where, isoprobe_args, deadline), parse_isoprobe, where + " isoprobe");
      }
      if (s > 0) static_ns[where].push_back(s);
      if (b > 0) isoprobe_ns[where].push_back(b);
      std::printf("round %d %-5s static %9.1f ns/call   isoprobe getpid %9.1f ns\n", round + 1, where.c_str(),
                  s, b);
      std::fflush(stdout);
    }
  }
  std::printf("\nmedians (ns per getpid) over %d rounds:\n", rounds);
  std::printf("  %-6s %14s %16s\n", "", "static loop", "isoprobe getpid");
  for (const char* where : {"host", "runc", "runsc"}) {
    std::printf("  %-6s %14.1f %16.1f\n", where, median(static_ns[where]), median(isoprobe_ns[where]));
  }
  double static_ratio = median(static_ns["runsc"]) / median(static_ns["runc"]);
  double isoprobe_ratio = median(isoprobe_ns["runsc"]) / median(isoprobe_ns["runc"]);
  if (!(static_ratio > 0) || !(isoprobe_ratio > 0)) {
    std::printf("ratio: not available (a runtime failed; see the messages above)\n");
    return 3;
  }
  std::printf("\nrunsc/runc ratio, static loop:      %.1fx\n", static_ratio);
  std::printf("runsc/runc ratio, isoprobe getpid:  %.1fx\n", isoprobe_ratio);
  std::printf("agreement (isoprobe / static):      %.3f\n", isoprobe_ratio / static_ratio);
  return 0;
}
