// The framed answer of the per-attempt freshness commands (harness/runner/framed_answer.h):
// sandbox output split by the harness's random boundary. The first input byte picks a
// boundary (the fixed one, or a short one that fuzzed text hits often); invariants: every
// part's text is a piece of the input, an exit code is -1 or at most three digits, and a
// part's name holds no newline.
#include "harness/runner/framed_answer.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string boundary = data[0] % 2 == 0 ? "@@isoharness-0123456789abcdef01234567" : "@@";
  const std::string text(isoharness::fuzz::as_text(data + 1, size - 1));
  for (const auto& [name, part] : isoharness::runner::parse_framed(text, boundary)) {
    if (name.find('\n') != std::string::npos) __builtin_trap();
    if (part.exit_code < -1 || part.exit_code > 999) __builtin_trap();
    if (part.out.size() > text.size() || text.find(part.out) == std::string::npos) __builtin_trap();
  }
  return 0;
}
