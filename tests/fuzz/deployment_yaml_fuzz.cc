// Deployment profiles (scenarios/deployments/*.yaml).
#include "harness/common/error.h"
#include "harness/scenario/scenario.h"
#include "tests/fuzz/fuzz_support.h"

using namespace isoharness;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    auto d = scenario::parse_deployment(fuzz::as_text(data, size), "fuzz.yaml");
    for (const auto& c : d.runtime_classes) (void)d.is_gvisor(c);
    (void)d.raw.dump();
  } catch (const UserError& e) {
    (void)e.diagnostics();
  }
  return 0;
}
