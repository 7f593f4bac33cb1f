// `hubble observe --output json` lines (harness/deploy/hawk/hubble_flows.h): flows from the
// platform's network layer, parsed and selected for one sandbox. Invariants checked: the
// parse stays within its bounds, and every record it selects lies in the window and says
// dropped only for a policy-denied reason. Registered with the other hawk targets.
#include <cstdlib>

#include "harness/deploy/hawk/hubble_flows.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace isoharness::deploy::hawk;
  const HubbleFlows flows =
      parse_hubble_flows(isoharness::fuzz::as_text(data, size), {.max_bytes = 1 << 16, .max_lines = 64});
  if (flows.flows.size() > 64) std::abort();
  static const std::vector<isoharness::deploy::EgressTarget> targets = {
      {"internet-canary", "203.0.113.40", 443, "tcp", "", "internet", "203.0.113.40"},
      {"canary-icmp", "203.0.113.40", 0, "icmp", "", "internet", "203.0.113.40"}};
  constexpr long long from = 1796306400000, to = from + 2000;
  const auto view =
      select_drops(flows, {"192.0.2.211", "fd00::17", "agent-env-run1-default-0", "inspect-run1"}, targets,
                   from, to, true);
  for (const auto& r : view.records) {
    if (r.unix_ms < from || r.unix_ms > to) std::abort();
    if (r.dropped && !policy_denied(r.reason)) std::abort();
  }
  (void)parse_rfc3339_ms(isoharness::fuzz::as_text(data, size));
  return 0;
}
