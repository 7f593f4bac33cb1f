// `--target NAME=HOST:PORT[/tcp|/dns|/http]` and `--resolver IP[:PORT]` arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace isoprobe {

enum class TargetProto { tcp, dns, http };
std::string_view proto_name(TargetProto p);

struct TargetSpec {
  std::string name;
  std::string host;  // IPv4 literal or a DNS name
  std::uint16_t port = 0;
  TargetProto proto = TargetProto::tcp;
  std::optional<std::uint32_t> ipv4;  // set when host is a literal
};

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

}  // namespace isoprobe
