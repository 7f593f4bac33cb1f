// Egress per way out: from an item's rendered values, which targets may be reached on which
// ports and protocols, and what blocks the rest (docs/CONTRACTS.md §2 "Ways out"). The rules
// are the agent-env chart's network policy (templates/network-policy.yaml):
// - an allowDomains name opens TCP 80 and 443 only, and the request must name an allowed
//   domain (TLS SNI on 443, HTTP Host on 80); allowDomainsPorts adds ports ({port, protocol
//   default ANY, domain optional}), which are pinned to the domain's addresses with no name
//   check; "*" opens every resolved address on every port, with no name check;
// - an allowCIDR range and an allowEntities entity open every port and protocol;
// - 169.254.169.254 is opened by nothing the chart names for it, but Cilium counts it as
//   `world`, so with world (or all, a range holding it, or every domain) only a node setting
//   keeps it closed: the way says so.
#include <algorithm>

#include "harness/policy/network_names.h"
#include "harness/policy/policy_internal.h"

namespace isoharness::policy {

std::string_view protocol_name(Protocol p) {
  switch (p) {
    case Protocol::tcp:
      return "tcp";
    case Protocol::udp:
      return "udp";
    case Protocol::any:
      return "any";
  }
  return "?";
}

std::string_view way_kind_name(WayKind k) {
  switch (k) {
    case WayKind::domain:
      return "domain";
    case WayKind::cidr:
      return "cidr";
    case WayKind::entity:
      return "entity";
    case WayKind::metadata:
      return "metadata";
  }
  return "?";
}

std::string_view blocker_name(Blocker b) {
  return b == Blocker::node ? "node" : "chart";
}

namespace {

std::vector<std::string> string_list(const nlohmann::json& values, const char* key) {
  std::vector<std::string> out;
  if (!values.contains(key) || !values[key].is_array()) return out;
  for (const auto& v : values[key])
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::optional<Protocol> protocol_from(std::string_view s) {
  if (s == "tcp" || s == "TCP") return Protocol::tcp;
  if (s == "udp" || s == "UDP") return Protocol::udp;
  if (s == "any" || s == "ANY") return Protocol::any;
  return std::nullopt;
}

// allowDomainsPorts entries that apply to domain (unscoped ones apply to every domain).
std::vector<OpenPort> extra_domain_ports(const nlohmann::json& values, const std::string& domain) {
  std::vector<OpenPort> out;
  if (!values.contains("allowDomainsPorts") || !values["allowDomainsPorts"].is_array()) return out;
  for (const auto& p : values["allowDomainsPorts"]) {
    if (!p.is_object() || !p.contains("port") || !p["port"].is_number_integer()) continue;
    const auto scope = p.value("domain", std::string());
    if (!scope.empty() && scope != domain) continue;
    const auto proto = protocol_from(p.value("protocol", std::string("ANY")));
    out.push_back(OpenPort{proto.value_or(Protocol::any), p["port"].get<int>()});
  }
  return out;
}

WayOut domain_way(const nlohmann::json& values, const std::string& domain, bool every_domain) {
  if (is_every_domain(domain))
    return {WayKind::domain,
            domain,
            {{Protocol::any, 0}},
            false,
            Blocker::chart,
            "allowDomains \"*\": every address a name resolves to, on every port and protocol"};
  WayOut w{
      WayKind::domain,
      domain,
      {{Protocol::tcp, 80}, {Protocol::tcp, 443}},
      !every_domain,
      Blocker::chart,
      "allowed domain: TCP 80 and 443" +
          std::string(every_domain ? "" : " with the HTTP Host and TLS SNI checked against allowDomains")};
  const auto extra = extra_domain_ports(values, domain);
  if (!extra.empty()) w.why += ", plus the ports allowDomainsPorts opens (no name check there)";
  w.why += "; blocked on every other port and protocol";
  w.open.insert(w.open.end(), extra.begin(), extra.end());
  return w;
}

WayOut metadata_way(bool world_open) {
  if (world_open)
    return {WayKind::metadata,
            kMetadataAddress,
            {},
            false,
            Blocker::node,
            "cloud metadata must be unreachable; the chart's egress holds it (Cilium counts 169.254.169.254 "
            "as world), so only a node setting blocks it"};
  return {WayKind::metadata,
          kMetadataAddress,
          {},
          false,
          Blocker::chart,
          "cloud metadata must be unreachable; the chart's egress policy opens nothing that holds it"};
}

}  // namespace

EgressExpectations egress_ways(const nlohmann::json& values) {
  EgressExpectations e;
  const auto domains = string_list(values, "allowDomains");
  const bool every_domain =
      std::any_of(domains.begin(), domains.end(), [](const auto& d) { return is_every_domain(d); });
  bool world_open = every_domain;
  for (const auto& d : domains) e.ways.push_back(domain_way(values, d, every_domain));
  for (const auto& c : string_list(values, "allowCIDR")) {
    e.ways.push_back({WayKind::cidr,
                      c,
                      {{Protocol::any, 0}},
                      false,
                      Blocker::chart,
                      "allowed range: every port and protocol"});
    world_open = world_open || cidr_contains(c, kMetadataAddress);
  }
  for (const auto& n : string_list(values, "allowEntities")) {
    e.ways.push_back({WayKind::entity,
                      n,
                      {{Protocol::any, 0}},
                      false,
                      Blocker::chart,
                      "allowed entity '" + n + "': every port and protocol"});
    world_open = world_open || n == "world" || n == "all";
  }
  e.ways.push_back(metadata_way(world_open));
  return e;
}

namespace {

bool port_open(const WayOut& w, const WayQuery& q) {
  return std::any_of(w.open.begin(), w.open.end(), [&](const OpenPort& o) {
    const bool proto = o.protocol == Protocol::any || o.protocol == q.protocol;
    return proto && (o.port == 0 || o.port == q.port);
  });
}

bool way_matches(const WayOut& w, const WayQuery& q) {
  switch (w.kind) {
    case WayKind::domain:
      return !q.domain.empty() && domain_matches(w.target, q.domain);
    case WayKind::cidr:
      return !q.address.empty() && cidr_contains(w.target, q.address);
    case WayKind::entity:
      return w.target == "world" || w.target == "all";  // every address outside the cluster
    case WayKind::metadata:
      return false;
  }
  return false;
}

// On a name-checked port (TCP 80/443 of a named domain), the name sent must be allowed.
bool name_allowed(const EgressExpectations& e, const WayOut& w, const WayQuery& q) {
  if (!w.name_checked || q.name.empty() || q.protocol != Protocol::tcp || (q.port != 80 && q.port != 443))
    return true;
  return std::any_of(e.ways.begin(), e.ways.end(), [&](const WayOut& other) {
    return other.kind == WayKind::domain && domain_matches(other.target, q.name);
  });
}

bool is_metadata(const WayQuery& q) {
  return q.address == kMetadataAddress;
}

}  // namespace

bool way_permitted(const EgressExpectations& egress, const WayQuery& query) {
  if (is_metadata(query) || query.port < 0 || query.port > 65535) return false;
  return std::any_of(egress.ways.begin(), egress.ways.end(), [&](const WayOut& w) {
    return way_matches(w, query) && port_open(w, query) && name_allowed(egress, w, query);
  });
}

nlohmann::json to_json(const EgressExpectations& egress) {
  nlohmann::json ways = nlohmann::json::array();
  for (const auto& w : egress.ways) {
    nlohmann::json open = nlohmann::json::array();
    for (const auto& o : w.open) open.push_back({{"protocol", protocol_name(o.protocol)}, {"port", o.port}});
    ways.push_back({{"kind", way_kind_name(w.kind)},
                    {"target", w.target},
                    {"open", std::move(open)},
                    {"name_checked", w.name_checked},
                    {"blocked_by", blocker_name(w.blocked_by)},
                    {"why", w.why}});
  }
  return {{"ways", std::move(ways)}};
}

}  // namespace isoharness::policy
