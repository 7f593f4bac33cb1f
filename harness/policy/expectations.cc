// What a probe inside the agent's sandbox must observe (docs/CONTRACTS.md §2), judged the
// way the reference asks: by whether the host was reached, not by how many dangerous-
// looking interfaces are visible. Under gVisor, kallsyms is empty, debugfs absent, a user
// namespace can be created, sysrq-trigger looks writable and Seccomp reads 0: all emulated,
// none a failure, so those keys are null ("not judged") or gVisor's own value there.
#include "harness/policy/network_names.h"
#include "harness/policy/policy_internal.h"

namespace isoharness::policy {

namespace {

// containerd's default set, and gVisor's (which leaves out CAP_NET_RAW).
constexpr const char* kDefaultCapsHost = "00000000a80425fb";
constexpr const char* kDefaultCapsGvisor = "00000000a80405fb";
constexpr const char* kNoCaps = "0000000000000000";

}  // namespace

nlohmann::json expectations(const PlanContext& ctx, const scenario::ItemFacts& facts, const PlanItem& item) {
  const auto& eff = item.isolation;
  const bool strict = eff.level == Level::strict;
  const bool gvisor = item.runtime_class && ctx.deployment.is_gvisor(*item.runtime_class);

  // Egress reach, from the rendered values (so a task's bridge at standard counts too).
  std::vector<std::string> domains;
  std::vector<std::string> cidrs;
  if (item.values.contains("allowDomains"))
    domains = item.values["allowDomains"].get<std::vector<std::string>>();
  if (item.values.contains("allowCIDR")) cidrs = item.values["allowCIDR"].get<std::vector<std::string>>();
  bool everything = false;
  for (const auto& d : domains) everything = everything || is_every_domain(d);
  for (const auto& c : cidrs) everything = everything || is_every_address(c);
  const bool any = !domains.empty() || !cidrs.empty();

  nlohmann::json e = nlohmann::json::object();
  e["kernel"] = gvisor ? "gvisor" : "host";
  e["runtime"] = item.runtime_class ? ctx.deployment.handler_of(*item.runtime_class) : "runc";
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
  e["seccomp"] = gvisor ? "emulated" : "filtered";
  e["egress_allowed"] = any;
  e["allow_domains"] = domains;
  e["allow_cidr"] = cidrs;
  e["host_reached"] = false;
  e["egress_roles"] = {
      {"internet", everything ? "all" : (any ? "named" : "none")},
      {"resolver", !domains.empty()},  // names must resolve for a named domain to be reachable
      {"metadata", false},
      {"cluster", false},
      {"sandbox", false},
  };
  // Interfaces as each runtime shows them (null = not judged: emulated under gVisor).
  e["kallsyms"] = gvisor ? nlohmann::json{"absent", "empty"} : nlohmann::json{"populated", "zeroed"};
  e["debugfs_present"] = gvisor ? nlohmann::json(false) : nlohmann::json(nullptr);
  e["userns_create"] = gvisor ? nlohmann::json(nullptr) : nlohmann::json(false);
  e["sysrq_writable"] = gvisor ? nlohmann::json(nullptr) : nlohmann::json(false);
  e["mount_tmpfs"] = false;
  return e;
}

bool egress_permitted(const nlohmann::json& expect, std::string_view role, std::string_view domain,
                      std::string_view address) {
  if (!expect.is_object()) return false;
  if (role == "resolver") {
    return expect.contains("egress_roles") && expect["egress_roles"].value("resolver", false);
  }
  if (role != "internet") return false;  // metadata, cluster, sandbox, anything unknown: never
  if (expect.contains("allow_domains") && !domain.empty()) {
    for (const auto& pattern : expect["allow_domains"]) {
      if (pattern.is_string() && domain_matches(pattern.get<std::string>(), domain)) return true;
    }
  }
  if (expect.contains("allow_domains")) {
    for (const auto& pattern : expect["allow_domains"]) {
      if (pattern == "*") return true;
    }
  }
  if (expect.contains("allow_cidr") && !address.empty()) {
    for (const auto& range : expect["allow_cidr"]) {
      if (range.is_string() && cidr_contains(range.get<std::string>(), address)) return true;
    }
  }
  return false;
}

}  // namespace isoharness::policy
