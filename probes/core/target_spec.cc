#include "probes/core/target_spec.h"

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
  }
  return "tcp";
}

bool is_datagram(TargetProto p) {
  return p == TargetProto::udp || p == TargetProto::icmp || p == TargetProto::exfil;
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

namespace {
std::optional<std::uint16_t> parse_port(std::string_view s) {
  if (s.size() > 5) return std::nullopt;
  auto v = parse_u64(s);
  if (!v || *v == 0 || *v > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(*v);
}
}  // namespace

std::optional<TargetSpec> parse_target_spec(std::string_view arg, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<TargetSpec> {
    if (error) *error = "--target '" + std::string(arg.substr(0, 200)) + "': " + why;
    return std::nullopt;
  };
  TargetSpec t;
  std::size_t eq = arg.find('=');
  if (eq == std::string_view::npos || eq == 0) return fail("expected NAME=HOST:PORT[/tcp|/dns|/http]");
  t.name = std::string(arg.substr(0, eq));
  if (t.name.size() > 64) return fail("the name is longer than 64 characters");
  for (char c : t.name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
              c == '_' || c == '.';
    if (!ok) return fail("the name may hold only letters, digits, '-', '_' and '.'");
  }
  std::string_view rest = arg.substr(eq + 1);
  std::size_t slash = rest.rfind('/');
  if (slash != std::string_view::npos) {
    std::string_view proto = rest.substr(slash + 1);
    if (proto == "tcp")
      t.proto = TargetProto::tcp;
    else if (proto == "dns")
      t.proto = TargetProto::dns;
    else if (proto == "http")
      t.proto = TargetProto::http;
    else if (proto == "udp")
      t.proto = TargetProto::udp;
    else if (proto == "icmp")
      t.proto = TargetProto::icmp;
    else if (proto == "exfil")
      t.proto = TargetProto::exfil;
    else
      return fail("unknown protocol '" + std::string(proto.substr(0, 16)) +
                  "' (tcp, dns, http, udp, icmp or exfil)");
    rest = rest.substr(0, slash);
  }
  if (!rest.empty() && rest.front() == '[') return fail("IPv6 targets are not supported");
  std::size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos) return fail("missing ':PORT'");
  t.host = std::string(rest.substr(0, colon));
  const bool no_port = t.proto == TargetProto::icmp && rest.substr(colon + 1) == "0";
  auto port = no_port ? std::optional<std::uint16_t>(0) : parse_port(rest.substr(colon + 1));
  if (!port) return fail("the port must be a number from 1 to 65535 (0 for icmp)");
  t.port = *port;
  if (t.host.empty()) return fail("missing HOST");
  t.ipv4 = parse_ipv4(t.host);
  if ((t.proto == TargetProto::udp || t.proto == TargetProto::icmp) && !t.ipv4)
    return fail("udp and icmp targets take an IPv4 address");
  if (t.proto == TargetProto::exfil && t.ipv4) return fail("an exfil target names a DNS zone");
  if (!t.ipv4) {
    bool all_digits_and_dots = t.host.find_first_not_of("0123456789.") == std::string::npos;
    if (all_digits_and_dots || !is_valid_dns_name(t.host))
      return fail("HOST '" + t.host.substr(0, 80) + "' is neither an IPv4 address nor a valid DNS name");
  }
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
