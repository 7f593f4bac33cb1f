// PLACEHOLDER until the workloads land: removed by the workloads work.
#include <cstdio>

#include "workloads/bench.h"

namespace isoprobe {
int run_bench(int, char**) {
  std::fprintf(stderr, "isoprobe bench: no workloads built yet\n");
  return 3;
}
}  // namespace isoprobe
