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

std::vector<EgressTarget> domain_port_scope_targets(const std::string& domain, const nlohmann::json& expect,
                                                    int (*unlisted)(const std::vector<int>&),
                                                    std::string (*namer)(std::string_view, std::string_view),
                                                    const std::string& udp_host) {
  constexpr std::size_t kMaxListed = 8;  // a long list is probed on its first entries
  std::vector<EgressTarget> out;
  std::vector<int> tcp;
  auto add = [&out](EgressTarget t) {
    for (const auto& o : out)
      if (o.name == t.name) return;
    out.push_back(std::move(t));
  };
  const auto it = expect.is_object() ? expect.find("allow_domains_ports") : expect.end();
  std::size_t taken = 0;
  if (expect.is_object() && it != expect.end() && it->is_array())
    for (const auto& entry : *it) {
      if (!entry.is_object() || !entry.contains("port") || !entry["port"].is_number_integer()) continue;
      const std::string scope = entry.value("domain", std::string());
      if ((!scope.empty() && scope != domain) || taken++ >= kMaxListed) continue;
      const int port = entry["port"].get<int>();
      const std::string proto = entry.value("protocol", std::string("ANY"));
      if (proto != "UDP") {
        tcp.push_back(port);
        add({namer(domain, "-port-" + std::to_string(port)), domain, port, "tcp", domain, "internet"});
      }
      if (proto != "TCP")
        add({namer(domain, "-udp-" + std::to_string(port)), udp_host.empty() ? domain : udp_host, port, "udp",
             domain, "internet"});
    }
  add({namer(domain, "-port-unlisted"), domain, unlisted(tcp), "tcp", domain, "internet"});
  return out;
}

}  // namespace isoharness::deploy
