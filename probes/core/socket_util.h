// Small socket helpers the two egress loops share (egress.cc for connections,
// datagram_egress.cc for udp, icmp and exfil).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace isoprobe {

// An IPv4 socket address from a host-order address and port.
inline sockaddr_in ipv4_sockaddr(std::uint32_t address, std::uint16_t port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(address);
  return sa;
}

// An errno as text for evidence: "Connection refused (errno 111)".
inline std::string errno_text(int err) {
  return std::string(std::strerror(err)) + " (errno " + std::to_string(err) + ")";
}

}  // namespace isoprobe
