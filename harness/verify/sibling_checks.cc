#include "harness/verify/sibling_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/policy/chart_values.h"
#include "harness/verify/checks_internal.h"

namespace isoharness::verify {
namespace {

using detail::make;
using nlohmann::json;

std::string str(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string planned_mode(const json& values, const std::string& service) {
  const json* services = values.is_object() && values.contains("services") ? &values["services"] : nullptr;
  if (!services || !services->is_object() || !services->contains(service)) return "default";
  return policy::service_network_isolated((*services)[service]) ? "none" : "default";
}

const deploy::SandboxFacts* find_sibling(const std::vector<deploy::SandboxFacts>& siblings,
                                         const std::string& service) {
  for (const auto& s : siblings)
    if (s.service == service) return &s;
  return nullptr;
}

// The egress outcome named `name` in a posture, or nullptr.
const json* outcome(const json& posture, const std::string& name) {
  const json* eg = detail::observation(posture, "egress");
  if (!eg || !eg->is_object() || !eg->contains("targets") || !(*eg)["targets"].is_array()) return nullptr;
  for (const auto& t : (*eg)["targets"])
    if (t.is_object() && str(t, "name") == name) return &t;
  return nullptr;
}

// Whether the agent got through to a sibling: a connection, or a refusal that only the
// sibling's own kernel can have sent (a policy that walls a service off drops packets).
bool reached(const json& o) {
  const std::string r = str(o, "result");
  return r == "connected" || r == "refused";
}

std::string describe(const json* o) {
  if (!o) return "not observed";
  std::string s = str(*o, "result");
  if (!str(*o, "address").empty()) s += " (" + str(*o, "address") + ")";
  return s;
}

}  // namespace

std::vector<std::string> sibling_target_flags(const std::vector<deploy::SandboxFacts>& siblings) {
  std::vector<std::string> out;
  for (const auto& s : siblings) {
    const std::string &service = s.service, &address = s.address;
    const int port = s.port;
    if (service.empty() || port <= 0) continue;
    out.push_back("sibling-" + service + "=" + service + ":" + std::to_string(port) + "/tcp");
    // A platform that does not tell the sibling's address: by name only.
    if (!address.empty())
      out.push_back("sibling-" + service + "-addr=" + address + ":" + std::to_string(port) + "/tcp");
  }
  return out;
}

std::vector<CheckResult> verify_siblings_from_agent(const json& planned_values,
                                                    const std::vector<deploy::SandboxFacts>& siblings,
                                                    const json& agent_posture) {
  std::vector<CheckResult> out;
  if (!planned_values.is_object() || !planned_values.contains("services") ||
      !planned_values["services"].is_object())
    return out;
  const bool agent_none = planned_mode(planned_values, "default") == "none";
  const std::string evidence = detail::observation_evidence(agent_posture, "egress");
  for (const auto& [service, _] : planned_values["services"].items()) {
    if (service == "default") continue;
    const std::string control = "sibling:" + service;
    const std::string mode = planned_mode(planned_values, service);
    const bool allowed = mode != "none" && !agent_none;
    const std::string expected = allowed ? "reachable by name and address (network_mode " + mode + ")"
                                         : "unreachable by name and address (network_mode " +
                                               (agent_none ? std::string("none on the agent") : mode) + ")";
    const deploy::SandboxFacts* fact = find_sibling(siblings, service);
    if (!fact) {
      out.push_back(
          make(control, false, expected, "not deployed",
               "sibling: service " + service + " is in the plan but the backend did not deploy it"));
      continue;
    }
    const bool by_name_only = fact->address.empty();
    const json* by_name = outcome(agent_posture, "sibling-" + service);
    const json* by_addr = by_name_only ? nullptr : outcome(agent_posture, "sibling-" + service + "-addr");
    const std::string observed =
        "by name: " + describe(by_name) +
        (by_name_only ? std::string("; by address: not tried (the backend does not tell sibling addresses)")
                      : "; by address " + fact->address + ": " + describe(by_addr));
    if (!by_name || (!by_name_only && !by_addr)) {
      out.push_back(make(control, false, expected, observed,
                         "sibling: the agent's probe did not report on service " + service, evidence));
      continue;
    }
    const bool name_ok = reached(*by_name) == allowed;
    const bool addr_ok = by_name_only || reached(*by_addr) == allowed;
    std::string reason;
    if (name_ok && addr_ok) {
      reason =
          allowed
              ? "siblings are reachable by default; found through the item's resolver"
              : "network_mode none: deny-all, the agent cannot reach it even knowing its name and address";
    } else if (allowed) {
      reason = "sibling: service " + service + " (network_mode " + mode +
               ") should be reachable from the agent but is not";
    } else {
      std::string how = !name_ok && !addr_ok ? "by name and by address " + fact->address
                        : !name_ok           ? std::string("by name")
                                             : "by address " + fact->address;
      reason = "sibling: service " + service + " has network_mode none but the agent reaches it " + how;
    }
    out.push_back(make(control, name_ok && addr_ok, expected, observed, reason, evidence));
  }
  return out;
}

IsolationProbe isolation_probe(const deploy::SandboxFacts& agent_facts, const deploy::SandboxFacts& sibling,
                               const std::vector<deploy::EgressTarget>& world_targets) {
  IsolationProbe p;
  auto target = [&p](const std::string& name, const std::string& spec) {
    p.args.push_back("--target");
    p.args.push_back(name + "=" + spec);
    p.names.push_back(name);
  };
  if (!agent_facts.address.empty()) target("agent", agent_facts.address + ":2222/tcp");
  for (const auto& other : agent_facts.sibling_list())
    if (other.service != sibling.service && !other.address.empty() && other.port > 0)
      target("sibling-" + other.service, other.address + ":" + std::to_string(other.port) + "/tcp");
  const std::string resolver = agent_facts.item_resolver ? agent_facts.item_resolver->address : "";
  if (!resolver.empty()) {
    target("item-resolver", resolver + ":53/tcp");
    if (!sibling.service.empty()) {
      target("item-dns", sibling.service + ":53/dns");
      p.args.push_back("--resolver");
      p.args.push_back(resolver);
    }
  }
  // Connections only (datagram targets are the agent's, judged by the witness); an IPv6
  // literal in brackets.
  for (const auto& t : world_targets)
    if (t.proto == "tcp" || t.proto == "http")
      target("world-" + t.name, (t.host.find(':') != std::string::npos ? "[" + t.host + "]" : t.host) + ":" +
                                    std::to_string(t.port) + "/tcp");
  return p;
}

CheckResult none_sibling_not_entered(const std::string& service, const std::string& why) {
  return CheckResult{"sibling:" + service + ":inside",
                     CheckStatus::na,
                     "nothing reachable from inside the service",
                     "not observed",
                     "sibling: " + why + "; service " + service +
                         "'s wall is judged from the agent's side (sibling:" + service + ")",
                     ""};
}

std::vector<CheckResult> verify_none_sibling(const NoneSiblingObservation& o) {
  std::vector<CheckResult> out;
  const std::string base = "sibling:" + o.service;
  out.push_back(
      make(base + ":harness_exec", o.exec_answered, "the harness runs a command in it through the runtime",
           o.exec_answered ? "isoprobe answered through the runtime's exec" : "no answer",
           o.exec_answered ? "the trusted harness still reaches a network_mode none service (runtime exec)"
                           : "sibling: the harness could not exec into service " + o.service + ": " +
                                 detail::bounded(o.exec_detail, 400),
           detail::bounded(o.exec_detail)));
  if (!o.exec_answered) {
    out.push_back(
        detail::not_applicable(base + ":isolated", "nothing observed from inside: the exec failed"));
    return out;
  }
  std::vector<std::string> reached, missing_names, lines;
  for (const auto& name : o.asked) {
    const json* t = outcome(o.posture, name);
    if (!t)
      missing_names.push_back(name);
    else if (str(*t, "result") == "connected")
      reached.push_back(name);
    lines.push_back(name + ": " + describe(t));
  }
  std::string observed;
  for (const auto& l : lines) observed += (observed.empty() ? "" : "; ") + l;
  std::string reason = "network_mode none: from inside, nothing is reachable (agent, siblings, world, DNS)";
  if (!missing_names.empty())
    reason = "sibling: the probe inside service " + o.service + " did not report every target";
  if (!reached.empty()) {
    const std::string r = fmt::format("{}", fmt::join(reached, ", "));
    reason = "sibling: service " + o.service + " has network_mode none but reaches " + r + " from inside";
  }
  out.push_back(make(base + ":isolated", reached.empty() && missing_names.empty() && !o.asked.empty(),
                     "nothing reachable from inside", observed, reason,
                     detail::observation_evidence(o.posture, "egress")));
  return out;
}

}  // namespace isoharness::verify
