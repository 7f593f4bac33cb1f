// A task's compose file (harness/scenario/sandbox_definition.h), converted the way the
// sandbox package converts it into the chart's values. Contract: converted, or refused with
// its problems listed (or a UserError); never an exception of another kind, and a
// conversion without errors gives values that can be written out.
#include <string>

#include "harness/common/error.h"
#include "harness/scenario/sandbox_definition.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace scenario = isoharness::scenario;
  try {
    const auto reading =
        scenario::convert_compose(isoharness::fuzz::as_text(data, size), "compose.fuzz.yaml");
    if (!reading.errors.empty()) return 0;
    for (const auto& service : reading.definition.services) (void)service.chart.dump();
    (void)reading.definition.volumes.dump();
  } catch (const isoharness::UserError&) {
  }
  return 0;
}
