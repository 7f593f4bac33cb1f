// isoprobe: the in-sandbox posture agent. `posture` prints one JSON document,
// `bench` runs the timing workloads (probes/workloads), `version` prints the version.
// Exit codes: 0 output printed; 2 bad usage; 3 isoprobe itself is broken.
#include <cstdio>
#include <cstring>

#include "probes/posture_agent/posture_command.h"
#include "workloads/bench.h"

namespace {

constexpr const char* kUsage =
    "       isoprobe bench [--benchmark_* flags]\n"
    "       isoprobe version\n";

}  // namespace

int main(int argc, char** argv) {
  if (auto rc = isoprobe::run_shared_command(argc, argv)) return *rc;
  if (argc >= 2 && std::strcmp(argv[1], "bench") == 0) return isoprobe::run_bench(argc - 1, argv + 1);
  std::fputs(isoprobe::kPostureUsage, stderr);
  std::fputs(kUsage, stderr);
  return 2;
}
