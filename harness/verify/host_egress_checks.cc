// "Was the host reached": judged by evidence — runtime sockets, host devices, the host's
// PID/UTS/network namespaces, a writable cgroup tree, Kubernetes credentials — and egress:
// every target the probe was asked to reach, against what the plan opens.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "harness/common/json_read.h"
#include "harness/policy/plan.h"
#include "harness/verify/checks_internal.h"

namespace isoharness::verify::detail {
namespace {

// The transport the plan scopes a target's protocol by.
policy::EgressTransport transport_of(const std::string& proto) {
  if (proto == "udp") return policy::EgressTransport::udp;
  if (proto == "tcp" || proto == "tls" || proto.starts_with("http")) return policy::EgressTransport::tcp;
  return policy::EgressTransport::other;
}

// Observed names for people: comma-separated, "(none)" when there are none.
std::string listed(const std::vector<std::string>& names) {
  return names.empty() ? "(none)" : fmt::format("{}", fmt::join(names, ", "));
}

// A container runtime's socket inside the sandbox drives the host.
void check_runtime_socket(const VerifyInput& in, std::vector<CheckResult>& out) {
  const auto* sockets = observation(in.posture, "runtime_sockets");
  if (!sockets) {
    out.push_back(missing("runtime_socket", in.posture, "runtime_sockets", "none"));
  } else {
    auto found = get_strings(sockets, "found");
    out.push_back(make(
        "runtime_socket", found.empty(), "none", listed(found),
        found.empty()
            ? "no container-runtime socket reachable"
            : "runtime_socket: a container-runtime socket is reachable — the host can be driven from inside",
        observation_evidence(in.posture, "runtime_sockets")));
  }
}

// Devices beyond the standard set; under gVisor, the ones gVisor serves itself are emulated.
void check_host_devices(const VerifyInput& in, std::vector<CheckResult>& out) {
  const auto* dev = observation(in.posture, "devices");
  if (!dev) {
    out.push_back(missing("host_devices", in.posture, "devices", "standard set only"));
  } else {
    // gVisor serves some devices itself (/dev/fuse, /dev/net/tun): they never reach the host.
    static const std::set<std::string> kGvisorOwn = {"fuse", "net", "net/tun", "tun"};
    const bool gvisor = observed_gvisor(in.posture);
    std::vector<std::string> host_devices, emulated;
    for (const auto& d : get_strings(dev, "extra"))
      (gvisor && kGvisorOwn.count(d) ? emulated : host_devices).push_back(d);
    std::string reason = host_devices.empty() ? "no host devices"
                                              : "host_devices: devices beyond the standard set are present";
    if (host_devices.empty() && !emulated.empty())
      reason = "emulated: " + listed(emulated) + " served by gVisor itself";
    out.push_back(make("host_devices", host_devices.empty(), "standard set only",
                       host_devices.empty() && emulated.empty()
                           ? "standard set only"
                           : listed(host_devices.empty() ? emulated : host_devices),
                       reason, observation_evidence(in.posture, "devices")));
  }
}

// The host's PID namespace: the host's PID 1 and most of its processes visible.
void check_pid_namespace(const VerifyInput& in, std::vector<CheckResult>& out) {
  const auto* procs = observation(in.posture, "processes");
  if (!procs) {
    out.push_back(missing("pid_namespace", in.posture, "processes", "own PID namespace"));
  } else {
    auto visible = get_int(procs, "visible").value_or(0);
    auto pid1 = get_string(procs, "pid1").value_or("");
    bool host_pidns = !in.host.pid1.empty() && pid1 == in.host.pid1 && in.host.process_count > 0 &&
                      visible * 2 >= in.host.process_count;
    out.push_back(make("pid_namespace", !host_pidns, "own PID namespace",
                       std::to_string(visible) + " processes visible, PID 1 = " + pid1,
                       host_pidns ? "pid_namespace: the host's processes are visible (host PID namespace)"
                                  : "the sandbox sees only its own processes",
                       observation_evidence(in.posture, "processes")));
  }
}

// The host's UTS or network namespace: its hostname, or exactly its interfaces.
void check_host_namespaces(const VerifyInput& in, std::vector<CheckResult>& out) {
  const auto* net = observation(in.posture, "network");
  if (!net) {
    out.push_back(missing("host_namespaces", in.posture, "network", "own UTS and network namespaces"));
  } else {
    auto hostname = get_string(net, "hostname").value_or("");
    auto ifaces = get_strings(net, "interfaces");
    std::set<std::string> mine(ifaces.begin(), ifaces.end()),
        host(in.host.interfaces.begin(), in.host.interfaces.end());
    bool same_uts = !in.host.hostname.empty() && hostname == in.host.hostname;
    bool same_net = host.size() > 1 && mine == host;
    std::string reason = "own hostname and network interfaces";
    if (same_uts) reason = "host_namespaces: the sandbox has the host's hostname (host UTS namespace)";
    if (same_net)
      reason = "host_namespaces: the sandbox sees the host's network interfaces (host network namespace)";
    out.push_back(make("host_namespaces", !same_uts && !same_net, "own UTS and network namespaces",
                       "hostname " + hostname + ", interfaces " + listed(ifaces), reason,
                       observation_evidence(in.posture, "network")));
  }
}

// A service-account token: required absent under strict only.
void check_kubernetes_credentials(const VerifyInput& in, std::vector<CheckResult>& out) {
  const auto* k8s = observation(in.posture, "kubernetes");
  if (!k8s) {
    out.push_back(missing("kubernetes_credentials", in.posture, "kubernetes", "no service-account token"));
  } else {
    bool token = get_bool(k8s, "service_account_token").value_or(false);
    if (in.level == policy::Level::strict) {
      out.push_back(
          make("kubernetes_credentials", !token, "no service-account token", token ? "token mounted" : "none",
               token ? "kubernetes_credentials: a service-account token is mounted in a strict sandbox"
                     : "no cluster credentials",
               observation_evidence(in.posture, "kubernetes")));
    } else {
      out.push_back(not_applicable("kubernetes_credentials", "only required absent under strict",
                                   token ? "token mounted" : "none"));
    }
  }
}

}  // namespace

void check_host_reached(const VerifyInput& in, std::vector<CheckResult>& out) {
  check_runtime_socket(in, out);
  check_host_devices(in, out);
  check_pid_namespace(in, out);
  check_host_namespaces(in, out);
  check_kubernetes_credentials(in, out);
}

namespace {

// Why the plan opens or closes a target, for the reason.
std::string egress_why(const nlohmann::json& expect, const deploy::EgressTarget& target, bool allowed) {
  if (target.role == "metadata") {
    const auto roles = expect.find("egress_roles");
    const bool world = expect.is_object() && roles != expect.end() && roles->is_object() &&
                       roles->value("internet", std::string()) == "all";
    // Cilium counts 169.254.169.254 as `world`: under world egress only the node keeps it out.
    return world ? "cloud metadata is never reachable; this item may reach the whole internet, which on the "
                   "platform includes the metadata address, so a node setting (not the chart) must block it"
                 : "cloud metadata is never reachable (the chart opens no way to it)";
  }
  if (target.role == "cluster") return "in-cluster endpoints are never reachable";
  if (target.role == "sandbox") return "other sandboxes are never reachable";
  if (target.role == "resolver")
    return allowed ? "allow_domains opens DNS to the world resolver" : "no domain is allowed, so no DNS";
  if (!target.server_name.empty() || target.proto == "tls")
    return allowed ? "the name it presents (" + target.domain + ") is allowed on this port"
                   : "the name it presents (" + target.domain +
                         ") is not in allow_domains, and allow_cidr does not cover the address";
  return allowed
             ? "allow_domains (with the ports allowDomainsPorts lists) / allow_cidr open it on this port and "
               "protocol"
             : "allow_domains / allow_cidr do not open it (allow_domains opens TCP 80 and 443, plus "
               "allowDomainsPorts, to the listed names only)";
}

// The probe's result for the target, or nullptr.
const nlohmann::json* egress_result(const nlohmann::json* eg, const std::string& name) {
  const nlohmann::json* result = nullptr;
  if (eg && eg->is_object() && eg->contains("targets") && (*eg)["targets"].is_array()) {
    for (const auto& t : (*eg)["targets"])
      if (common::json_string(t, "name") == name) result = &t;
  }
  return result;
}

}  // namespace

void check_egress(const VerifyInput& in, std::vector<CheckResult>& out) {
  const auto* eg = observation(in.posture, "egress");
  const std::string evidence = observation_evidence(in.posture, "egress");
  for (const char* key : {"allow_domains", "allow_domains_ports", "allow_cidr", "egress_roles"}) {
    if (!planned(in, key)) {
      out.push_back(unplanned("egress", key));
      return;
    }
  }
  for (const auto& target : in.targets) {
    const std::string control = "egress:" + target.name;
    // The plan decides what may be reached (one rule, the policy engine's).
    const bool allowed = egress_target_allowed(in.expect, target);
    const std::string why = egress_why(in.expect, target, allowed);
    const nlohmann::json* result = egress_result(eg, target.name);
    if (!result) {
      out.push_back(missing(control, in.posture, "egress", allowed ? "connected" : "blocked"));
      continue;
    }
    const std::string got = bounded(common::json_string_or(*result, "result", "?"), 64);
    // An ICMP way out the sandbox cannot even open a socket for (no ping_group_range or
    // CAP_NET_RAW, or a network stack without ICMP) is closed by the runtime before any
    // packet: no witness can see what is never sent, and raw_sockets judges the sockets.
    // Not applicable either way, unless something of it arrived. (TCP and UDP sockets always
    // open: a no_socket there goes to the rule and, with nothing sent, is unwitnessed.)
    if (got == "no_socket" && target.proto == "icmp" && !arrival_seen(in, target))
      out.push_back(not_applicable(control,
                                   "the sandbox cannot open a socket for " + target.proto + ": " +
                                       bounded(common::json_string_or(*result, "detail"), 256),
                                   got));
    else
      out.push_back(judge_egress_target(in, target, allowed, why, got, evidence));
  }
}

}  // namespace isoharness::verify::detail

namespace isoharness::verify {

bool egress_target_allowed(const nlohmann::json& expect, const deploy::EgressTarget& target) {
  return policy::egress_permitted_on(
      expect, {target.role, target.domain, target.host, detail::transport_of(target.proto), target.port});
}

}  // namespace isoharness::verify
