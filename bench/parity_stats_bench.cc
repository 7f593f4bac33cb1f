// What the parity statistics cost: compare() for growing rounds and combine() (bootstrap)
// for a 13-workload mix, so the parity command's budget is not spent on arithmetic.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

#include "harness/parity/parity.h"

namespace {

std::vector<double> lognormal(std::uint64_t seed, std::size_t n, double median) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 0.05);
  std::vector<double> out(n);
  for (double& v : out) v = median * std::exp(normal(rng));
  return out;
}

void BM_compare(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto b = lognormal(1, n, 1e-3), c = lognormal(2, n, 1.05e-3);
  for (auto _ : state) benchmark::DoNotOptimize(isoharness::parity::compare("w", b, c, 1.10));
}
BENCHMARK(BM_compare)->Arg(5)->Arg(8)->Arg(12)->Arg(30)->Arg(100)->Unit(benchmark::kMicrosecond);

void BM_combine(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<isoharness::parity::WorkloadComparison> comps;
  std::map<std::string, double> weights;
  for (int w = 0; w < 13; ++w) {
    const std::string name = "w" + std::to_string(w);
    comps.push_back(
        isoharness::parity::compare(name, lognormal(10 + w, n, 1e-3), lognormal(40 + w, n, 1.02e-3), 1.10));
    weights[name] = 1.0 + w % 3;
  }
  for (auto _ : state) benchmark::DoNotOptimize(isoharness::parity::combine(comps, weights, 1.10));
}
BENCHMARK(BM_combine)->Arg(12)->Arg(30)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
