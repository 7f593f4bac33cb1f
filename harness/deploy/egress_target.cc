#include "harness/deploy/egress_target.h"

#include <fmt/format.h>

#include "harness/common/fnv1a.h"

namespace isoharness::deploy {

namespace {

constexpr std::size_t kMaxName = 64;

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.';
}

}  // namespace

bool egress_target_name_ok(std::string_view name) {
  if (name.empty() || name.size() > kMaxName) return false;
  for (char c : name)
    if (!name_char(c)) return false;
  return true;
}

std::string allowed_domain_target_name(std::string_view domain, std::string_view suffix) {
  std::string clean;
  for (char c : domain) clean += name_char(c) ? c : '_';
  std::string name = "allowed-" + clean;
  if (name.size() + suffix.size() <= kMaxName) return name + std::string(suffix);
  const std::string tag = fmt::format("-{:012x}", fnv1a(domain) & 0xffffffffffffULL);
  return name.substr(0, kMaxName - tag.size() - suffix.size()) + tag + std::string(suffix);
}

std::vector<EgressTarget> domain_scope_targets(const std::string& domain,
                                               std::string (*namer)(std::string_view, std::string_view)) {
  auto target = [&](std::string_view suffix, int port, const char* proto, const std::string& presented) {
    EgressTarget t{namer(domain, suffix), domain, port, proto, presented, "internet"};
    if (presented != domain) t.server_name = presented;
    return t;
  };
  return {target("-port-22", 22, "tcp", domain), target("-sni", 443, "tls", domain),
          target("-sni-fronted", 443, "tls", kFrontedName),
          target("-host-fronted", 80, "http", kFrontedName)};
}

}  // namespace isoharness::deploy
