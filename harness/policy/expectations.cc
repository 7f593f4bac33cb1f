// What a probe inside the agent's sandbox must observe (docs/CONTRACTS.md §2): the one
// statement of every rule verify enforces. Every key written here is read by a check in
// harness/verify, and no check reads a key not written here (tests/unit/verify_test.cpp
// holds both sides to that).
//
// The rules are judged the way the reference asks: by whether the host was reached, not by
// how many dangerous-looking interfaces are visible. The interfaces gVisor emulates are
// stated once, in kInterfaceRules below, as the states each kernel may show.
#include <algorithm>

#include "harness/policy/network_names.h"
#include "harness/policy/policy_internal.h"

namespace isoharness::policy {

namespace {

// containerd's default set, and gVisor's (which leaves out CAP_NET_RAW).
constexpr const char* kDefaultCapsHost = "00000000a80425fb";
constexpr const char* kDefaultCapsGvisor = "00000000a80405fb";
constexpr const char* kNoCaps = "0000000000000000";

// The states verify may observe for an interface, and which each kernel accepts. "emulated"
// is an open interface seen while gVisor is observed: gVisor's own, never the host's
// (writing its sysrq-trigger never reaches the host; a user namespace created inside it is
// gVisor-internal; Seccomp reads 0 because syscalls never reach the host kernel, and runsc
// is itself seccomp-confined on the host). The reference's "What gVisor actually changes"
// is the test of this table (tests/unit/policy_reference_test.cpp).
struct InterfaceRule {
  const char* control;
  std::vector<const char*> host;    // accepted under the host kernel (runc)
  std::vector<const char*> gvisor;  // accepted under gVisor
};

const std::vector<InterfaceRule>& interface_rules() {
  static const std::vector<InterfaceRule> rules = {
      // Seccomp mode: "filter" (2), "off" (0 or 1 on the host kernel), "emulated".
      {"seccomp", {"filter"}, {"filter", "emulated"}},
      // unshare(CLONE_NEWUSER), a tmpfs mount, sysrq-trigger opened for writing.
      {"user_namespace", {"refused"}, {"refused", "emulated"}},
      {"mount", {"refused"}, {"refused", "emulated"}},
      {"sysrq", {"refused"}, {"refused", "emulated"}},
      // /proc/kallsyms: symbols may be listed on the host kernel (the reference's
      // "populated") but their addresses must read as zero; gVisor lists none.
      {"kallsyms", {"absent", "empty", "zeroed"}, {"absent", "empty"}},
      // /sys/kernel/debug: an empty mount point on the host kernel (the reference's
      // "present"), never the host's debugfs; absent under gVisor.
      {"debugfs", {"absent", "empty"}, {"absent"}},
  };
  return rules;
}

// allowDomainsPorts: the extra ports allow_domains opens, each {port, protocol} with
// protocol TCP, UDP or ANY (the chart's default when absent), and the domain it is scoped to
// when it names one. Malformed entries are left out.
nlohmann::json domain_ports(const nlohmann::json& values) {
  nlohmann::json out = nlohmann::json::array();
  const auto it = values.find("allowDomainsPorts");
  if (it == values.end() || !it->is_array()) return out;
  for (const auto& entry : *it) {
    const nlohmann::json* port = entry.is_object() && entry.contains("port") ? &entry["port"] : &entry;
    if (!port->is_number_integer() || port->get<long long>() < 1 || port->get<long long>() > 65535) continue;
    std::string proto = "ANY";
    if (entry.is_object() && entry.contains("protocol") && entry["protocol"].is_string())
      proto = entry["protocol"].get<std::string>();
    for (char& c : proto) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (proto != "TCP" && proto != "UDP" && proto != "ANY") continue;
    nlohmann::json e = {{"port", port->get<int>()}, {"protocol", proto}};
    // Scoped to one domain: that domain only (ways_out.cc), as the chart scopes it.
    if (entry.is_object() && entry.contains("domain") && entry["domain"].is_string())
      e["domain"] = entry["domain"];
    out.push_back(std::move(e));
  }
  return out;
}

nlohmann::json egress_expectations(const PlanItem& item) {
  // Egress reach, from the rendered values (so a task's bridge at standard counts too).
  std::vector<std::string> domains;
  std::vector<std::string> cidrs;
  if (item.values.contains("allowDomains"))
    domains = item.values["allowDomains"].get<std::vector<std::string>>();
  if (item.values.contains("allowCIDR")) cidrs = item.values["allowCIDR"].get<std::vector<std::string>>();
  bool everything = false;
  for (const auto& d : domains) everything = everything || is_every_domain(d);
  for (const auto& c : cidrs) everything = everything || is_every_address(c);
  // Cilium's `world` (and `all`) entity is every address outside the cluster.
  if (item.values.contains("allowEntities"))
    for (const auto& e : item.values["allowEntities"]) everything = everything || e == "world" || e == "all";
  const bool any = !domains.empty() || !cidrs.empty();
  return {
      {"allow_domains", domains},
      {"allow_domains_ports", domain_ports(item.values)},
      {"allow_cidr", cidrs},
      {"egress_roles",
       {
           {"internet", everything ? "all" : (any ? "named" : "none")},
           {"resolver", !domains.empty()},  // names must resolve for a named domain to be reachable
           {"metadata", false},
           {"cluster", false},
           {"sandbox", false},
       }},
  };
}

}  // namespace

nlohmann::json expectations(const PlanContext& ctx, const scenario::ItemFacts& facts, const PlanItem& item) {
  const auto& eff = item.isolation;
  const bool strict = eff.level == Level::strict;
  const bool gvisor = item.runtime_class && ctx.deployment.is_gvisor(*item.runtime_class);

  nlohmann::json e = egress_expectations(item);
  e["kernel"] = gvisor ? "gvisor" : "host";
  // null: the runtime's default set, which cap_eff_default names.
  e["cap_eff"] = strict ? nlohmann::json(kNoCaps) : nlohmann::json(nullptr);
  e["cap_eff_default"] = gvisor ? kDefaultCapsGvisor : kDefaultCapsHost;
  // Never held, whatever the level: the capabilities container escapes need.
  e["cap_eff_forbidden"] = {"CAP_SYS_ADMIN",       "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_PTRACE",
                            "CAP_DAC_READ_SEARCH", "CAP_NET_ADMIN",  "CAP_BPF",       "CAP_PERFMON"};
  e["no_new_privs"] = strict;
  e["uid"] = eff.non_root ? nlohmann::json(1000) : nlohmann::json(nullptr);
  // "/" is writable only when the root filesystem is and the user owns it (root).
  e["root_writable"] = !eff.read_only_root && !eff.non_root;
  // The control itself: is the root filesystem mounted read-only (readOnlyRootFilesystem)?
  e["root_read_only"] = eff.read_only_root;
  e["writable_paths"] = {"/tmp", facts.workdir};
  for (const auto& rule : interface_rules()) e[rule.control] = gvisor ? rule.gvisor : rule.host;
  add_escape_expectations(ctx, item, gvisor, e);
  return e;
}

bool egress_permitted(const nlohmann::json& expect, std::string_view role, std::string_view domain,
                      std::string_view address) {
  if (!expect.is_object() || !expect.contains("egress_roles") || !expect["egress_roles"].is_object())
    return false;
  const auto& roles = expect["egress_roles"];
  const auto it = roles.find(std::string(role));
  if (it == roles.end()) return false;  // a role the plan does not name: never
  if (it->is_boolean()) return it->get<bool>();
  if (!it->is_string() || *it == "none") return false;
  if (*it == "all") return true;
  // "named": exactly what allow_domains / allow_cidr name.
  if (expect.contains("allow_domains") && !domain.empty()) {
    for (const auto& pattern : expect["allow_domains"]) {
      if (pattern.is_string() && domain_matches(pattern.get<std::string>(), domain)) return true;
    }
  }
  if (expect.contains("allow_cidr") && !address.empty()) {
    for (const auto& range : expect["allow_cidr"]) {
      if (range.is_string() && cidr_contains(range.get<std::string>(), address)) return true;
    }
  }
  return false;
}

// The one rule for a way out scoped by port and protocol: the "named" lists of the expect
// block are read back as the values they came from and judged by way_permitted (ways_out.cc,
// the chart's rules), so the plan's ways out and the checks cannot disagree.
bool egress_permitted_on(const nlohmann::json& expect, const EgressWay& way) {
  if (!egress_permitted(expect, way.role, way.domain, way.address)) return false;
  if (way.address == kMetadataAddress) return false;
  if (way.role != "internet" || way.transport == EgressTransport::other) return true;
  const auto& role = expect["egress_roles"]["internet"];
  if (!role.is_string() || role != "named") return true;  // "all": every port and protocol
  nlohmann::json values = nlohmann::json::object();
  if (expect.contains("allow_domains")) values["allowDomains"] = expect["allow_domains"];
  if (expect.contains("allow_cidr")) values["allowCIDR"] = expect["allow_cidr"];
  if (expect.contains("allow_domains_ports")) values["allowDomainsPorts"] = expect["allow_domains_ports"];
  const Protocol protocol = way.transport == EgressTransport::udp ? Protocol::udp : Protocol::tcp;
  return way_permitted(egress_ways(values),
                       WayQuery{std::string(way.domain), std::string(way.address), way.port, protocol, ""});
}

bool egress_permitted(const nlohmann::json& expect, std::string_view role, std::string_view domain,
                      std::string_view address, int port, std::string_view protocol) {
  if (protocol != "tcp" && protocol != "udp" && protocol != "icmp") return false;
  if (protocol == "icmp") {  // only a range (or "everything") opens every protocol
    if (!egress_permitted(expect, role, domain, address) || address == kMetadataAddress) return false;
    const auto& r = expect["egress_roles"][std::string(role)];
    if (!r.is_string() || r != "named") return true;
    return egress_permitted(expect, role, "", address);  // by address only: a domain opens no ICMP
  }
  const EgressTransport transport = protocol == "udp" ? EgressTransport::udp : EgressTransport::tcp;
  return egress_permitted_on(expect, EgressWay{role, domain, address, transport, port});
}

}  // namespace isoharness::policy
