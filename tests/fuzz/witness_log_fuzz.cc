// An outside witness's log (harness/deploy/witness_log.h), as the local backend reads it
// from the world and the hawk backend over HTTP: written outside the harness, possibly cut
// at any byte. Parsed, then one sandbox's records selected. Invariants: every record kept
// has a kind the format names and a port in range, and a selection holds only records of
// that sandbox inside its window.
#include <string>

#include "harness/deploy/witness_log.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace deploy = isoharness::deploy;
  const auto log = deploy::parse_witness_log(isoharness::fuzz::as_text(data, size));
  for (const auto& r : log.records) {
    if (r.kind != "tcp-syn" && r.kind != "tcp-data" && r.kind != "udp" && r.kind != "icmp-echo" &&
        r.kind != "dns")
      __builtin_trap();
    if (r.port < 0 || r.port > 65535) __builtin_trap();
  }
  const long long from = 1700000000000LL, to = 1700000060000LL;
  const auto view =
      deploy::select_witness_records(log, "192.0.2.194", "2001:db8::c2", "ihw-0123456789abcdef", from, to);
  for (const auto& r : view.records) {
    if (r.unix_ms < from || r.unix_ms > to) __builtin_trap();
    if (r.source != "192.0.2.194" && r.source != "2001:db8::c2" && r.nonce != "ihw-0123456789abcdef")
      __builtin_trap();
  }
  return 0;
}
