// A/A noise floor on this host: the CPU control (isoprobe's cpu_hash workload) measured as
// "baseline" and as "candidate" with the very same command, in interleaved rounds (warm-up
// first, the order of A and B shuffled per round), then compared by harness/parity. It must
// read parity at about 1.00 with an interval within ±2 % (tolerance 1.02).
//
//   parity_aa_bench [--rounds N] [--workload NAME] [--isoprobe PATH] [--tolerance T]
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "harness/common/subprocess.h"
#include "harness/parity/parity.h"

using namespace isoharness;

namespace {

std::string default_isoprobe() {
  const std::string bundle = std::string(ISOHARNESS_BINARY_DIR) + "/probes/isoprobe-bundle/isoprobe";
  if (::access(bundle.c_str(), X_OK) == 0) return bundle;
  return std::string(ISOHARNESS_BINARY_DIR) + "/probes/isoprobe";
}

// One measurement: seconds per iteration of `workload` from isoprobe's JSON.
double measure(const std::string& isoprobe, const std::string& workload) {
  RunOptions options;
  options.deadline = std::chrono::seconds(60);
  auto run = run_command({isoprobe, "bench", "--workloads", workload, "--benchmark_format=json"}, options);
  if (!run || !run->ok()) {
    throw std::runtime_error(
        fmt::format("isoprobe bench failed: {}", run ? run->describe() : run.error().message));
  }
  const auto doc = nlohmann::json::parse(run->out);
  for (const auto& b : doc.at("benchmarks")) {
    if (b.value("run_type", "iteration") != "iteration") continue;
    const std::string unit = b.value("time_unit", "ns");
    const double scale = unit == "ns" ? 1e-9 : unit == "us" ? 1e-6 : unit == "ms" ? 1e-3 : 1.0;
    return b.at("real_time").get<double>() * scale;
  }
  throw std::runtime_error("isoprobe bench printed no iteration result for " + workload);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 20;
  std::string workload = "cpu_hash";
  std::string isoprobe = default_isoprobe();
  double tolerance = 1.02;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--rounds")
      rounds = std::stoi(value);
    else if (flag == "--workload")
      workload = value;
    else if (flag == "--isoprobe")
      isoprobe = value;
    else if (flag == "--tolerance")
      tolerance = std::stod(value);
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (rounds < 1 || rounds > 500) {
    std::fprintf(stderr, "--rounds must be 1..500\n");
    return 2;
  }
  if (::access(isoprobe.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "isoprobe not found at %s (build the isoprobe target or pass --isoprobe)\n",
                 isoprobe.c_str());
    return 2;
  }
  const auto started = std::chrono::steady_clock::now();
  std::vector<double> a, b;
  try {
    (void)measure(isoprobe, workload);  // warm-up, discarded
    std::mt19937_64 rng(20261129);
    for (int r = 0; r < rounds; ++r) {
      const bool a_first = (rng() & 1) == 0;
      if (a_first) {
        a.push_back(measure(isoprobe, workload));
        b.push_back(measure(isoprobe, workload));
      } else {
        b.push_back(measure(isoprobe, workload));
        a.push_back(measure(isoprobe, workload));
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parity_aa_bench: %s\n", e.what());
    return 3;
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const auto c = parity::compare(workload, a, b, tolerance);
  std::printf(
      "A/A %s on this host, %d interleaved rounds (%.1f s): ratio %.4f [%.4f, %.4f] (%s CI, p = %.3g)\n",
      workload.c_str(), rounds, elapsed, c.ratio.estimate, c.ratio.low, c.ratio.high, c.ci_method.c_str(),
      c.p_value);
  std::printf("median A %.4g s, median B %.4g s; verdict against %.2f: %s; interval within ±%.0f %%: %s\n",
              c.baseline_median, c.candidate_median, tolerance, c.verdict.c_str(), (tolerance - 1) * 100,
              (c.ratio.low > 1 / tolerance && c.ratio.high < tolerance) ? "yes" : "no");
  for (const auto& w : c.warnings) std::printf("warning: %s\n", w.c_str());
  return 0;
}
