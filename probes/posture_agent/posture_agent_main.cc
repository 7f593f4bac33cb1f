// The posture-only isoprobe: `posture` and `version`, the same code as the full isoprobe's,
// linked fully static without the timing workloads (and so without Google Benchmark). One
// file of about 2.6 MB instead of the 7.4 MB bundle: what `isoharness run` uploads into every
// sandbox. `isoharness parity` uploads the full bundle, which also has `bench`.
#include <cstdio>
#include <cstring>

#include "probes/core/registry.h"
#include "probes/posture_agent/posture_command.h"

int main(int argc, char** argv) {
  auto problems = isoprobe::check_registry(isoprobe::all_probes());
  if (!problems.empty()) {
    for (const auto& p : problems) std::fprintf(stderr, "isoprobe: broken probe registry: %s\n", p.c_str());
    return 3;
  }
  if (argc >= 2 && std::strcmp(argv[1], "version") == 0) return isoprobe::version_main();
  if (argc >= 2 && std::strcmp(argv[1], "posture") == 0) return isoprobe::posture_main(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "bench") == 0) {
    std::fputs(
        "isoprobe: this is the posture-only build; `bench` is in the full bundle (probes/isoprobe-bundle)\n",
        stderr);
    return 2;
  }
  std::fputs(isoprobe::kPostureUsage, stderr);
  std::fputs("       isoprobe version\n", stderr);
  return 2;
}
