#include "probes/core/target_spec.h"

#include <arpa/inet.h>

#include "probes/core/text_util.h"

namespace isoprobe {

std::string_view proto_name(TargetProto p) {
  switch (p) {
    case TargetProto::tcp:
      return "tcp";
    case TargetProto::dns:
      return "dns";
    case TargetProto::http:
      return "http";
    case TargetProto::udp:
      return "udp";
    case TargetProto::icmp:
      return "icmp";
    case TargetProto::exfil:
      return "exfil";
    case TargetProto::tls:
      return "tls";
    case TargetProto::http_google:
      return "http-google";
    case TargetProto::http_imds_token:
      return "http-imds-token";
  }
  return "tcp";
}

bool is_datagram(TargetProto p) {
  return p == TargetProto::udp || p == TargetProto::icmp || p == TargetProto::exfil;
}

bool is_http(TargetProto p) {
  return p == TargetProto::http || p == TargetProto::http_google || p == TargetProto::http_imds_token;
}

bool is_valid_nonce(std::string_view nonce) {
  return nonce.size() >= 8 && nonce.size() <= 32 &&
         nonce.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

bool is_valid_dns_name(std::string_view name) {
  if (!name.empty() && name.back() == '.') name.remove_suffix(1);
  if (name.empty() || name.size() > 253) return false;
  std::size_t label = 0;
  for (char c : name) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok || ++label > 63) return false;
  }
  return label > 0;
}

std::string format_ipv6(const std::array<std::uint8_t, 16>& address) {
  char buf[INET6_ADDRSTRLEN];
  return ::inet_ntop(AF_INET6, address.data(), buf, sizeof buf) ? buf : "?";
}

namespace {
std::optional<std::uint16_t> parse_port(std::string_view s) {
  if (s.size() > 5) return std::nullopt;
  auto v = parse_u64(s);
  if (!v || *v == 0 || *v > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(*v);
}
}  // namespace

namespace {

std::optional<TargetProto> parse_proto(std::string_view proto) {
  static constexpr TargetProto kAll[] = {
      TargetProto::tcp, TargetProto::dns,         TargetProto::http,
      TargetProto::udp, TargetProto::icmp,        TargetProto::exfil,
      TargetProto::tls, TargetProto::http_google, TargetProto::http_imds_token};
  for (TargetProto p : kAll)
    if (proto == proto_name(p)) return p;
  return std::nullopt;
}

bool valid_target_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
              c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// HOST of HOST:PORT, by the target's protocol: "" when fine, else what is wrong.
std::string parse_host(std::string_view host, TargetSpec& t) {
  if (!host.empty() && host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return "expected [IPv6]:PORT";
    const std::string literal(host.substr(1, std::min<std::size_t>(host.size() - 2, 64)));
    std::array<std::uint8_t, 16> a{};
    if (::inet_pton(AF_INET6, literal.c_str(), a.data()) != 1)
      return "'" + literal + "' is not an IPv6 address";
    if (t.proto == TargetProto::dns || t.proto == TargetProto::exfil)
      return "an IPv6 address has nothing to resolve";
    t.ipv6 = a;
    t.host = format_ipv6(a);
    return "";
  }
  t.host = std::string(host);
  if (t.host.empty()) return "missing HOST";
  t.ipv4 = parse_ipv4(t.host);
  if (t.proto == TargetProto::icmp && !t.ipv4) return "icmp targets take an IPv4 or [IPv6] address";
  if (t.proto == TargetProto::exfil && t.ipv4) return "an exfil target names a DNS zone";
  if (!t.ipv4) {
    bool all_digits_and_dots = t.host.find_first_not_of("0123456789.") == std::string::npos;
    if (all_digits_and_dots || !is_valid_dns_name(t.host))
      return "HOST '" + t.host.substr(0, 80) + "' is neither an IPv4 address nor a valid DNS name";
  }
  return "";
}

// Cuts "@SERVERNAME" off the end of rest: "" when fine (or absent), else what is wrong.
std::string take_server_name(std::string_view& rest, TargetSpec& t) {
  const std::size_t at = rest.rfind('@');
  if (at == std::string_view::npos) return "";
  const std::string_view name = rest.substr(at + 1);
  if (!is_valid_dns_name(name)) return "the server name after '@' must be a valid DNS name";
  t.server_name = std::string(name);
  rest = rest.substr(0, at);
  return "";
}

}  // namespace

std::optional<TargetSpec> parse_target_spec(std::string_view arg, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<TargetSpec> {
    if (error) *error = "--target '" + std::string(arg.substr(0, 200)) + "': " + why;
    return std::nullopt;
  };
  TargetSpec t;
  std::size_t eq = arg.find('=');
  if (eq == std::string_view::npos || eq == 0) return fail("expected NAME=HOST:PORT[/PROTO]");
  t.name = std::string(arg.substr(0, eq));
  if (t.name.size() > 64) return fail("the name is longer than 64 characters");
  if (!valid_target_name(t.name)) return fail("the name may hold only letters, digits, '-', '_' and '.'");
  std::string_view rest = arg.substr(eq + 1);
  if (std::string why = take_server_name(rest, t); !why.empty()) return fail(why);
  std::size_t slash = rest.rfind('/');
  if (slash != std::string_view::npos) {
    auto proto = parse_proto(rest.substr(slash + 1));
    if (!proto)
      return fail("unknown protocol '" + std::string(rest.substr(slash + 1, 16)) +
                  "' (tcp, dns, http, udp, icmp, exfil, tls, http-google or http-imds-token)");
    t.proto = *proto;
    rest = rest.substr(0, slash);
  }
  if (!t.server_name.empty() && t.proto != TargetProto::tls && !is_http(t.proto))
    return fail("@SERVERNAME goes with tls and the http forms only");
  std::size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos) return fail("missing ':PORT'");
  const bool no_port = t.proto == TargetProto::icmp && rest.substr(colon + 1) == "0";
  auto port = no_port ? std::optional<std::uint16_t>(0) : parse_port(rest.substr(colon + 1));
  if (!port) return fail("the port must be a number from 1 to 65535 (0 for icmp)");
  t.port = *port;
  if (std::string why = parse_host(rest.substr(0, colon), t); !why.empty()) return fail(why);
  return t;
}

std::optional<ResolverSpec> parse_resolver_spec(std::string_view arg, std::string* error) {
  ResolverSpec r;
  std::string_view host = arg;
  std::size_t colon = arg.find(':');
  if (colon != std::string_view::npos) {
    auto port = parse_port(arg.substr(colon + 1));
    if (!port) {
      if (error) *error = "--resolver '" + std::string(arg.substr(0, 100)) + "': the port must be 1 to 65535";
      return std::nullopt;
    }
    r.port = *port;
    host = arg.substr(0, colon);
  }
  auto addr = parse_ipv4(host);
  if (!addr) {
    if (error) *error = "--resolver '" + std::string(arg.substr(0, 100)) + "': expected IPv4[:PORT]";
    return std::nullopt;
  }
  r.address = *addr;
  return r;
}

}  // namespace isoprobe
