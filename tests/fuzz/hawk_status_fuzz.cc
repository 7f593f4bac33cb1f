// `hawk status` JSON (harness/deploy/hawk/status_json.h): pods, phases, events, from the
// platform. Registered in CMakeLists.txt only when the hawk backend's sources are in the tree.
#include "harness/deploy/hawk/status_json.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto status = isoharness::deploy::hawk::parse_status(isoharness::fuzz::as_text(data, size));
  if (!status) return 0;
  (void)isoharness::deploy::hawk::describe_sandbox_pods(*status);
  (void)isoharness::deploy::hawk::sandbox_running(*status);
  (void)isoharness::deploy::hawk::describe_stuck(isoharness::deploy::hawk::stuck_sandbox(*status));
  return 0;
}
