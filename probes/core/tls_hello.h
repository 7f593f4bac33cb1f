// The two request identities a name-checking egress proxy reads (Cilium's proxy checks both
// against an allow list, against domain fronting): the server name of a TLS ClientHello
// (the SNI extension) and the Host header of an HTTP/1.x request.
//
// build_client_hello writes a minimal ClientHello that a TLS 1.2 or 1.3 server accepts as
// well formed: one record, TLS 1.3 and 1.2 offered, common suites, x25519/P-256, and an
// x25519 key share whose bytes are the caller's (nobody here completes the handshake).
// The readers take the first bytes of a connection, never more than they need, and say
// whether more bytes are needed, the identity was found, or the bytes are not that protocol.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace isoprobe {

// A ClientHello in one TLS record, naming server_name (1-253 bytes; empty = no SNI
// extension). random fills the Random, the session id and the key share.
std::string build_client_hello(std::string_view server_name, const std::array<std::uint8_t, 32>& random);

enum class PeekStatus { need_more, found, absent, not_this_protocol };

struct PeekResult {
  PeekStatus status = PeekStatus::need_more;
  std::string name;  // lower-cased, trailing dot and :port removed (found only)
};

// The SNI host name of the ClientHello at the start of bytes. absent: a ClientHello
// without one. not_this_protocol: not a TLS handshake record holding a ClientHello, or
// lengths that do not add up.
PeekResult peek_client_hello_sni(std::string_view bytes);

// The Host header of the HTTP/1.x request head at the start of bytes. need_more until the
// head ends (an empty line); absent: a head without Host; not_this_protocol: not a request
// line, or a head longer than 8 KiB.
PeekResult peek_http_host(std::string_view bytes);

// Whether name matches an allow-list pattern: "*" (every name), "*.zone" (any name under
// zone, at any depth), else the name itself; case-insensitive, a trailing dot ignored.
bool allow_pattern_matches(std::string_view pattern, std::string_view name);

// A presented name made safe for one field of a space-separated log line: at most 253
// bytes, every byte outside [a-z0-9.*_-] replaced by '?'.
std::string name_for_log(std::string_view name);

// The name a connection's first bytes present: the TLS ClientHello's server name, else the
// HTTP request's Host, made safe by name_for_log; "" when the bytes hold neither (yet).
std::string presented_name(std::string_view first_bytes);

}  // namespace isoprobe
