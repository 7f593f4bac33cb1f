// Datagram egress: UDP datagrams, ICMP echo requests and a DNS query in the
// canary zone, each carrying the run's nonce ("ihw-<nonce>") for an outside witness. The
// sandbox's own view is weak by nature (a datagram has no handshake): "connected" means an
// answer came back, "timeout" only that none did. The verdict rests on the witness where
// the harness has one.
//
// Every target is sent at once from one poll() loop under one deadline; each datagram is
// sent at most three times, 500 ms apart (a target with its own, shorter deadline: a third
// of it apart); every socket is closed on every path.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "probes/core/egress.h"

namespace isoprobe {

// Which sockets the sandbox may open, for the egress observation's "sockets" value: each
// "ok" or the errno name it got. ICMP datagram sockets (net.ipv4.ping_group_range), raw
// ICMP sockets and packet sockets (both CAP_NET_RAW): a raw or packet socket is a way
// around port-based rules.
nlohmann::json socket_abilities();

std::vector<EgressOutcome> run_datagram_egress(const std::vector<TargetSpec>& targets,
                                               const std::optional<ResolverSpec>& resolver,
                                               const std::string& resolver_note, const std::string& nonce,
                                               Clock::time_point deadline);

// The ICMP checksum (RFC 1071) of the bytes.
std::uint16_t icmp_checksum(const unsigned char* data, std::size_t size);

}  // namespace isoprobe
