// The posture-only isoprobe: `posture` and `version`, the same code as the full isoprobe's,
// linked fully static without the timing workloads (and so without Google Benchmark). One
// file of about 2 MB instead of the 7.4 MB bundle: what `isoharness run` uploads into every
// sandbox. `isoharness parity` uploads the full bundle, which also has `bench`.
#include <cstdio>
#include <cstring>

#include "probes/posture_agent/peer_commands.h"
#include "probes/posture_agent/posture_command.h"

int main(int argc, char** argv) {
  if (auto rc = isoprobe::run_shared_command(argc, argv)) return *rc;
  if (argc >= 2 && std::strcmp(argv[1], "bench") == 0) {
    std::fputs(
        "isoprobe: this is the posture-only build; `bench` is in the full bundle (probes/isoprobe-bundle)\n",
        stderr);
    return 2;
  }
  std::fputs(isoprobe::kPostureUsage, stderr);
  std::fputs(isoprobe::kPeerUsage, stderr);
  std::fputs("       isoprobe version\n", stderr);
  return 2;
}
