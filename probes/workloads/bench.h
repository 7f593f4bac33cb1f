// `isoprobe bench`: timing workloads registered with Google Benchmark.
#pragma once

namespace isoprobe {

// Runs the workloads; argv are Google Benchmark's own flags
// (--benchmark_format=json, --benchmark_filter=..., --benchmark_repetitions=...).
int run_bench(int argc, char** argv);

}  // namespace isoprobe
