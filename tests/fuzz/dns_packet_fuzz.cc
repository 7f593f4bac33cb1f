// isoprobe's DNS response parser: every byte of a reply is hostile. The first two bytes
// are the id we expect; the question name is fixed, as isoprobe's would be.
#include "probes/core/dns_packet.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const auto id = static_cast<std::uint16_t>(data[0] << 8 | data[1]);
  const auto packet = isoharness::fuzz::as_text(data + 2, size - 2);
  auto r = isoprobe::parse_dns_response(packet, id, "target.example.com");
  if (r.addresses.size() > 32) __builtin_trap();
  if (r.ok != r.error.empty()) __builtin_trap();
  std::string name;
  std::size_t next = 0;
  if (isoprobe::read_dns_name(packet, 12, &name, &next)) {
    if (name.size() > 255 || next > packet.size()) __builtin_trap();
  }
  // The query builder takes names from --target flags (harness-made, but checked).
  auto q = isoprobe::build_dns_query(id, packet.substr(0, 300));
  if (!q.bytes.empty() && !q.error.empty()) __builtin_trap();
  return 0;
}
