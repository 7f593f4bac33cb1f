// A human-baseline file (harness/baselines/baselines.h), CSV or JSON Lines as a team
// exports it: read with and without a mix list. Contract: accepted or refused with
// UserError; every accepted record has a positive duration, a UTC time no later than the
// target date and a mix the options allow.
#include <string>

#include "harness/baselines/baselines.h"
#include "harness/common/error.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace baselines = isoharness::baselines;
  const auto text = isoharness::fuzz::as_text(data, size);
  baselines::ParseOptions options;
  options.now_utc = "2026-12-01T00:00:00Z";
  options.at_utc = "2026-11-30T00:00:00Z";
  for (const bool with_mixes : {false, true}) {
    if (with_mixes) options.mixes = std::set<std::string>{"default", "agentic"};
    try {
      const auto file = baselines::parse_baselines(text, "baselines.fuzz", options);
      for (const auto& r : file.records) {
        if (!(r.duration_s > 0)) __builtin_trap();
        if (r.recorded_utc.size() != 20 || r.recorded_utc > options.at_utc) __builtin_trap();
        if (with_mixes && !r.mix.empty() && r.mix != "default" && !options.mixes->count(r.mix))
          __builtin_trap();
      }
    } catch (const isoharness::UserError&) {
    }
  }
  return 0;
}
