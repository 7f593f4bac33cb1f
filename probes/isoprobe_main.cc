// PLACEHOLDER until the isoprobe issue lands.
#include <cstdio>
#include <cstring>

#include "workloads/bench.h"

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "version") == 0) {
    std::printf("isoprobe 0.1.0\n");
    return 0;
  }
  if (argc >= 2 && std::strcmp(argv[1], "bench") == 0) {
    return isoprobe::run_bench(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "usage: isoprobe version | bench [--benchmark_*]\n");
  return 2;
}
