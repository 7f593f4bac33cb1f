// name-proxy: the local world's stand-in for Cilium's L7 proxy on allow-listed names
// (tools/name_proxy.cc).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace isoharness::world_helper {

int cmd_name_proxy(const std::vector<std::string>& args);

// One sandbox's rules, as the local backend writes them (deploy/local/nft_rules.h):
//   allow PATTERN     an allowDomains pattern the TLS server name / HTTP Host must match
//   skip-sni          forward TLS whatever its server name (selftest weakening)
//   skip-host         forward HTTP whatever its Host (selftest weakening)
struct NameRules {
  std::vector<std::string> patterns;
  bool skip_sni = false;
  bool skip_host = false;
};
NameRules parse_name_rules(std::string_view text);

// What the proxy does with a connection's first bytes to port dport: "forward", "reset", or
// "" (read more). why says which name was found and which rule decided.
struct NameDecision {
  std::string verdict;
  std::string why;
};
NameDecision decide(const NameRules& rules, int dport, std::string_view first_bytes, bool more_possible);

}  // namespace isoharness::world_helper
