// addresses: this sandbox's own IPv4 and IPv6 addresses, read from inside (probes/core/
// addresses.h). Loopback and IPv6 link-local addresses are left out of the value and listed
// in the evidence. The harness gives the sandbox's peers these addresses to try.
#include "probes/core/addresses.h"
#include "probes/core/probe.h"
#include "probes/core/probe_support.h"
#include "probes/core/text_util.h"

namespace isoprobe {

namespace {

Observation observe_addresses(Context&) {
  Observation o;
  const OwnAddresses own = own_addresses();
  if (own.err != 0) return o.fail("getifaddrs: " + errno_name(own.err), own.err);
  Evidence ev;
  for (const auto& line : own.lines) ev.add_line(line);
  o.value = {{"ipv4", own.ipv4}, {"ipv6", own.ipv6}};
  o.evidence = ev.str();
  return o;
}

}  // namespace

ProbeDescriptor addresses_probe() {
  return {"addresses", "this sandbox's own IPv4 and IPv6 addresses, from inside (getifaddrs)",
          std::chrono::milliseconds(1000), observe_addresses};
}

}  // namespace isoprobe
