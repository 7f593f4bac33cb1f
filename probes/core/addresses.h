// This sandbox's own addresses (getifaddrs: netlink, no file of the image). Loopback and
// IPv6 link-local addresses are not in ipv4/ipv6 (no other sandbox can reach them); every
// address is a line of `lines`. Used by the `addresses` posture probe and by peer-serve.
#pragma once

#include <string>
#include <vector>

namespace isoprobe {

struct OwnAddresses {
  std::vector<std::string> ipv4, ipv6;  // at most 64 each
  std::vector<std::string> lines;       // "IFACE ADDR[ (local only)]", at most 256
  int err = 0;                          // errno of getifaddrs; 0 when it worked
};

OwnAddresses own_addresses();

}  // namespace isoprobe
