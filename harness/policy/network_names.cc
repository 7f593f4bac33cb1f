#include "harness/policy/network_names.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstring>

namespace isoharness::policy {

namespace {

struct Address {
  int family = 0;  // AF_INET or AF_INET6
  std::array<unsigned char, 16> bytes{};
  int bits() const { return family == AF_INET ? 32 : 128; }
};

std::optional<Address> parse_address(std::string_view text) {
  if (text.empty() || text.size() > 45) return std::nullopt;
  std::string s(text);
  Address a;
  if (inet_pton(AF_INET, s.c_str(), a.bytes.data()) == 1) {
    a.family = AF_INET;
    return a;
  }
  if (inet_pton(AF_INET6, s.c_str(), a.bytes.data()) == 1) {
    a.family = AF_INET6;
    return a;
  }
  return std::nullopt;
}

struct Range {
  Address base;
  int prefix = 0;
};

std::optional<Range> parse_range(std::string_view cidr) {
  auto slash = cidr.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto addr = parse_address(cidr.substr(0, slash));
  if (!addr) return std::nullopt;
  std::string_view p = cidr.substr(slash + 1);
  int prefix = -1;
  if (p.empty() || p.size() > 3 ||
      !std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  std::from_chars(p.data(), p.data() + p.size(), prefix);
  if (prefix < 0 || prefix > addr->bits()) return std::nullopt;
  return Range{*addr, prefix};
}

bool bit_at(const Address& a, int i) {
  return (a.bytes[i / 8] >> (7 - i % 8)) & 1;
}

bool host_bits_set(const Range& r) {
  for (int i = r.prefix; i < r.base.bits(); ++i) {
    if (bit_at(r.base, i)) return true;
  }
  return false;
}

std::string network_of(const Range& r) {
  Address a = r.base;
  for (int i = r.prefix; i < a.bits(); ++i)
    a.bytes[i / 8] &= static_cast<unsigned char>(~(1u << (7 - i % 8)));
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(a.family, a.bytes.data(), buf, sizeof buf);
  return std::string(buf) + "/" + std::to_string(r.prefix);
}

bool valid_label(std::string_view label) {
  if (label.empty() || label.size() > 63) return false;
  if (label.front() == '-' || label.back() == '-') return false;
  for (char c : label) {
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
          c == '-'))
      return false;
  }
  return true;
}

}  // namespace

bool is_every_domain(std::string_view domain) {
  return domain == "*";
}

bool is_every_address(std::string_view cidr) {
  auto r = parse_range(cidr);
  return r && r->prefix == 0;
}

std::optional<std::string> check_domain(std::string_view d) {
  if (d == "*") return std::nullopt;
  if (d.empty()) return "an empty domain name";
  if (d.find("://") != std::string_view::npos || d.find('/') != std::string_view::npos)
    return "a domain name, not a URL: write just the host, e.g. target.example.com";
  if (d.find(':') != std::string_view::npos && !parse_address(d))
    return "a domain name takes no port: write just the host";
  if (parse_address(d))
    return "an address, not a domain name: put addresses in allow_cidr (e.g. " + std::string(d) +
           (d.find(':') == std::string_view::npos ? "/32" : "/128") + ")";
  if (d.size() > 253) return "a domain name is at most 253 characters";
  if (d.back() == '.') return "write the domain without the trailing dot";
  std::string_view rest = d;
  if (rest.starts_with("*.")) rest.remove_prefix(2);
  if (rest.find('*') != std::string_view::npos)
    return "a wildcard may only be a whole first label, as in *.example.com";
  int labels = 0;
  while (true) {
    auto dot = rest.find('.');
    std::string_view label = rest.substr(0, dot);
    for (char c : label) {
      if (std::isupper(static_cast<unsigned char>(c))) return "write domain names in lowercase";
    }
    if (!valid_label(label))
      return "'" + std::string(label) + "' is not a valid label (letters, digits and '-', 1-63 characters)";
    ++labels;
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
  if (labels < 2) return "name a fully qualified domain, e.g. target.example.com";
  return std::nullopt;
}

std::optional<std::string> check_cidr(std::string_view cidr) {
  if (cidr.find('/') == std::string_view::npos) {
    if (parse_address(cidr))
      return "a range needs its prefix length: write " + std::string(cidr) +
             (cidr.find(':') == std::string_view::npos ? "/32" : "/128") + " for one address";
    return "not an IPv4 or IPv6 range in CIDR form (e.g. 198.51.100.0/24)";
  }
  auto r = parse_range(cidr);
  if (!r) return "not an IPv4 or IPv6 range in CIDR form (e.g. 198.51.100.0/24)";
  if (host_bits_set(*r)) return "host bits are set; did you mean " + network_of(*r) + "?";
  return std::nullopt;
}

bool domain_matches(std::string_view pattern, std::string_view domain) {
  if (pattern == "*") return true;
  if (domain.empty()) return false;
  if (pattern.starts_with("*.")) {
    std::string_view suffix = pattern.substr(1);  // ".example.com"
    return domain.size() > suffix.size() && domain.ends_with(suffix);
  }
  return pattern == domain;
}

bool cidr_contains(std::string_view cidr, std::string_view address) {
  auto r = parse_range(cidr);
  auto a = parse_address(address);
  if (!r || !a || r->base.family != a->family) return false;
  for (int i = 0; i < r->prefix; ++i) {
    if (bit_at(r->base, i) != bit_at(*a, i)) return false;
  }
  return true;
}

}  // namespace isoharness::policy
