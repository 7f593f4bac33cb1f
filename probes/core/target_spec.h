// `--target NAME=HOST:PORT[/PROTO][@SERVERNAME]` and `--resolver IP[:PORT]` arguments.
//
// PROTO: tcp (default), dns, http, udp, icmp, exfil, tls, http-google, http-imds-token.
// udp, icmp and exfil are datagrams the outside witness looks for: udp and icmp carry the
// run's nonce in their payload (icmp takes port 0), exfil asks the sandbox's resolver for
// `ihw-<nonce>.HOST` (HOST is the canary zone). tls sends a ClientHello
// (probes/core/tls_hello.h). http-google asks for /computeMetadata/v1/ with
// `Metadata-Flavor: Google`, http-imds-token for an IMDSv2 token (PUT /latest/api/token with
// `X-aws-ec2-metadata-token-ttl-seconds`): the ways cloud metadata servers want to be asked.
//
// @SERVERNAME (tls and the http forms) is the name presented instead of HOST: the TLS
// server name or the HTTP Host header. Such a target reads "connected" only when the far
// side answered (docs/CONTRACTS.md §"Allow-list scope and name-scoped targets").
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace isoprobe {

enum class TargetProto { tcp, dns, http, udp, icmp, exfil, tls, http_google, http_imds_token };
// Whether the target is sent as datagrams (probes/core/datagram_egress.h).
bool is_datagram(TargetProto p);
// Whether the target sends an HTTP request once connected (http and its metadata forms).
bool is_http(TargetProto p);
std::string_view proto_name(TargetProto p);

struct TargetSpec {
  std::string name;
  std::string host;  // IPv4 literal or a DNS name
  std::uint16_t port = 0;
  TargetProto proto = TargetProto::tcp;
  std::optional<std::uint32_t> ipv4;  // set when host is a literal
  // Set when host is an IPv6 literal, written [ADDR]:PORT (tcp, http, udp and icmp only).
  std::optional<std::array<std::uint8_t, 16>> ipv6;
  // The name presented (TLS server name / HTTP Host) when it is not host; "" = host.
  std::string server_name;
  // This target's own deadline, counted from its start, when it is shorter than the egress
  // deadline: a target the harness expects to be stopped (`--blocked`), whose attempt the
  // outside witnesses judge, not how long the sandbox waited. Unset: the egress deadline.
  std::optional<std::chrono::milliseconds> deadline;
  // The name the request identifies: server_name, else host.
  const std::string& presented_name() const { return server_name.empty() ? host : server_name; }
};

// The literal IPv6 address in its canonical text form.
std::string format_ipv6(const std::array<std::uint8_t, 16>& address);

struct ResolverSpec {
  std::uint32_t address = 0;
  std::uint16_t port = 53;
};

// On bad input, error says what is wrong with the argument and what is expected.
std::optional<TargetSpec> parse_target_spec(std::string_view arg, std::string* error);
std::optional<ResolverSpec> parse_resolver_spec(std::string_view arg, std::string* error);

// A host name our resolver may ask for: dot-separated labels of letters, digits, '-'
// and '_', each 1-63 bytes, at most 253 bytes in all (one trailing dot allowed).
bool is_valid_dns_name(std::string_view name);

// A nonce as `--nonce` takes it: 8 to 32 lower-case hex digits.
bool is_valid_nonce(std::string_view nonce);

}  // namespace isoprobe
