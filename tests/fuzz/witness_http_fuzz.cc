// The answer of an operator-run witness to the hawk backend's GET
// (harness/deploy/hawk/witness_http.h), as read off the socket and possibly cut at the read
// bound. Invariants: an accepted body is at most max_body bytes and, when not marked
// truncated, a suffix of the input.
#include <string>

#include "harness/deploy/hawk/witness_http.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace hawk = isoharness::deploy::hawk;
  const auto raw = isoharness::fuzz::as_text(data, size);
  for (const std::size_t max_body : {std::size_t{0}, std::size_t{16}, std::size_t{1} << 20}) {
    for (const bool cut : {false, true}) {
      const auto answer = hawk::parse_http_answer(raw, max_body, cut);
      if (!answer) continue;
      if (!raw.starts_with("HTTP/1.0 200") && !raw.starts_with("HTTP/1.1 200")) __builtin_trap();
      if (answer->body.size() > max_body) __builtin_trap();
      if (!answer->truncated && !raw.ends_with(answer->body)) __builtin_trap();
    }
  }
  return 0;
}
