// The operator witness log's wire format (harness/deploy/witness_wire.h), both ways. The
// first input byte picks the offset asked from and the identity the reader knows; the rest
// is read as an answer's body (invariants: an answer marked replaced takes no line, and the
// next read starts exactly after the lines taken), then framed as a log and read back
// (invariants: every whole line within the bound comes back in order, the identity is the
// log's, and nothing is rejected).
#include <string>

#include "harness/deploy/witness_wire.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

namespace deploy = isoharness::deploy;
const std::string kKey = "fuzz-witness-token-0123456789";

void read_as_answer(std::string_view body, long long from, const std::string& known) {
  const auto f = deploy::read_witness_frames(body, kKey, from, known);
  if (f.replaced && !f.lines.empty()) __builtin_trap();
  if (f.next_offset != from + static_cast<long long>(f.lines.size())) __builtin_trap();
  if (!f.lines.empty() && (f.log_id.empty() || f.lines.back() != '\n')) __builtin_trap();
}

void round_trip(std::string_view log, long long from, std::size_t bound) {
  const std::string id = deploy::witness_log_id(log);
  const auto size = from + static_cast<long long>(log.size());
  const auto f = deploy::read_witness_frames(deploy::frame_witness_log(kKey, id, log, from, size, bound),
                                             kKey, from, id);
  if (!f.problem.empty() || f.rejected != 0 || f.replaced || f.log_id != id) __builtin_trap();
  if (log.substr(0, f.lines.size()) != f.lines) __builtin_trap();
  if (bound >= 128 * log.size() + 4096 && f.lines.size() != log.rfind('\n') + 1) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const long long from = data[0] % 2 == 0 ? 0 : 300;
  const std::string known = data[0] % 4 < 2 ? "" : deploy::witness_log_id("W1 1 ready - - 0 - -\n");
  const auto text = isoharness::fuzz::as_text(data + 1, size - 1);
  read_as_answer(text, from, known);
  round_trip(text, from, data[0] % 8 < 4 ? std::size_t{256} : std::size_t{1} << 24);
  return 0;
}
