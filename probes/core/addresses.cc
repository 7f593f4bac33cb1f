#include "probes/core/addresses.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <cerrno>

namespace isoprobe {
namespace {

constexpr std::size_t kMaxAddresses = 64;
constexpr std::size_t kMaxLines = 256;

bool link_local6(const in6_addr& a) {
  return a.s6_addr[0] == 0xfe && (a.s6_addr[1] & 0xc0) == 0x80;
}

void take(const ifaddrs& ifa, OwnAddresses& out) {
  char text[INET6_ADDRSTRLEN] = {};
  const int family = ifa.ifa_addr->sa_family;
  bool routable = false;
  if (family == AF_INET) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(ifa.ifa_addr);
    ::inet_ntop(AF_INET, &sin->sin_addr, text, sizeof text);
    routable = (ntohl(sin->sin_addr.s_addr) >> 24) != 127;
    if (routable && out.ipv4.size() < kMaxAddresses) out.ipv4.emplace_back(text);
  } else if (family == AF_INET6) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(ifa.ifa_addr);
    ::inet_ntop(AF_INET6, &sin6->sin6_addr, text, sizeof text);
    routable = !IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr) && !link_local6(sin6->sin6_addr);
    if (routable && out.ipv6.size() < kMaxAddresses) out.ipv6.emplace_back(text);
  } else {
    return;
  }
  if (out.lines.size() < kMaxLines)
    out.lines.push_back(std::string(ifa.ifa_name ? ifa.ifa_name : "?") + " " + text +
                        (routable ? "" : " (local only)"));
}

}  // namespace

OwnAddresses own_addresses() {
  OwnAddresses out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) {
    out.err = errno;
    return out;
  }
  for (const ifaddrs* p = list; p != nullptr; p = p->ifa_next)
    if (p->ifa_addr != nullptr) take(*p, out);
  ::freeifaddrs(list);
  return out;
}

}  // namespace isoprobe
