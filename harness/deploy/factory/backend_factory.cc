#include "harness/deploy/factory/backend_factory.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>

#include "harness/common/error.h"
#include "harness/deploy/egress_target.h"
#include "harness/deploy/hawk/hawk_backend.h"
#include "harness/deploy/local/local_backend.h"
#include "harness/deploy/local/nft_rules.h"

namespace isoharness::deploy {
namespace {

bool is_address(const std::string& host) {
  in_addr a{};
  return ::inet_pton(AF_INET, host.c_str(), &a) == 1;
}

// "host:port" (checked by the profile reader) as a tcp target of the given role.
EgressTarget target_of(const std::string& name, const std::string& host_port, const std::string& role) {
  auto colon = host_port.rfind(':');
  std::string host = host_port.substr(0, colon);
  int port = std::stoi(host_port.substr(colon + 1));
  return EgressTarget{name, host, port, "tcp", is_address(host) ? "" : host, role};
}

// The profile's `egress:` targets, else the local world's.
std::vector<EgressTarget> profile_targets(const scenario::DeploymentProfile& profile) {
  if (!profile.egress) return local::world_targets();
  std::vector<EgressTarget> out;
  const auto& e = *profile.egress;
  if (!e.internet_canary.empty()) out.push_back(target_of("internet-canary", e.internet_canary, "internet"));
  if (!e.metadata.empty()) {
    // Metadata as each cloud's server wants to be asked (GCE's header, an IMDSv2 token),
    // and on UDP when the profile names its address: never reachable, world egress or not.
    EgressTarget m = target_of("metadata", e.metadata, "metadata");
    out.push_back(m);
    for (const char* proto : {"http-google", "http-imds-token"}) {
      EgressTarget t = m;
      t.name = std::string("metadata-") + (proto + 5);
      t.proto = proto;
      out.push_back(t);
    }
    if (is_address(m.host)) out.push_back(EgressTarget{"metadata-udp", m.host, 53, "udp", "", "metadata"});
  }
  if (!e.cluster_api.empty()) out.push_back(target_of("cluster-api", e.cluster_api, "cluster"));
  return out;
}

// The ways out aimed at an operator-run witness (the profile's witness: section), named as
// the local world names its own: TCP (matched on the sandbox's address), UDP and ICMP echo
// (matched on the nonce too) to each canary, and a query in the canary zone.
std::vector<EgressTarget> witness_targets(const scenario::WitnessSettings& w) {
  std::vector<EgressTarget> out;
  const auto add = [&out](const std::string& prefix, const std::string& address,
                          const scenario::WitnessSettings& s, bool tcp) {
    if (tcp && s.tcp_port > 0)
      out.push_back({prefix + "-tcp", address, s.tcp_port, "tcp", "", "internet", address});
    for (std::size_t i = 0; i < s.udp_ports.size(); ++i) {
      const int port = s.udp_ports[i];
      out.push_back({i == 0 ? prefix + "-udp" : prefix + "-udp-" + std::to_string(port), address, port, "udp",
                     "", "internet", address});
    }
    out.push_back({prefix + "-icmp", address, 0, "icmp", "", "internet", address});
  };
  add("canary", w.canary, w, true);
  // IPv6 TCP is left out: the sandbox's IPv6 address is unknown here and a SYN has no nonce.
  if (!w.canary6.empty()) add("canary6", w.canary6, w, false);
  if (!w.zone.empty())
    out.push_back({"dns-exfil", w.zone, 53, "exfil", "probe." + w.zone, "internet", w.zone});
  return out;
}

// The targets with an operator's witness: the profile's own (or the local world's), each
// covered by the witness only where it is aimed at a canary, then the witness's targets
// (replacing any of the same name).
std::vector<EgressTarget> with_witness(std::vector<EgressTarget> base, const scenario::WitnessSettings& w) {
  auto added = witness_targets(w);
  std::vector<EgressTarget> out;
  out.reserve(base.size() + added.size());
  for (auto& t : base) {
    const bool replaced =
        std::any_of(added.begin(), added.end(), [&t](const EgressTarget& a) { return a.name == t.name; });
    if (replaced) continue;
    const bool at_canary = (t.host == w.canary || (!w.canary6.empty() && t.host == w.canary6));
    t.witness_address = at_canary && t.proto != "dns" ? t.host : "";
    out.push_back(std::move(t));
  }
  for (auto& t : added) out.push_back(std::move(t));
  return out;
}

}  // namespace

std::unique_ptr<Backend> make_backend(scenario::BackendKind backend,
                                      const scenario::DeploymentProfile& profile,
                                      const BackendOptions& options) {
  using scenario::backend_name;
  if (profile.backend && profile.backend != backend)
    throw UserError(fmt::format("deployment profile {} is for backend '{}', not '{}'", profile.path,
                                backend_name(*profile.backend), backend_name(backend)));
  if (backend == scenario::BackendKind::local) {
    local::LocalOptions local_options;
    local_options.run_id = options.run_id;
    return local::make_local_backend(profile.raw, local_options);
  }
  if (backend == scenario::BackendKind::hawk) {
    if (!profile.hawk) throw UserError("deployment profile " + profile.path + " has no hawk: section");
    if (profile.hawk->jumphost_host_key.empty() && !options.accept_new_host_keys)
      throw UserError(
          "deployment profile " + profile.path +
          ": hawk.jumphost_host_key is required (pin the jumphost), or pass --accept-new-host-keys");
    hawk::HawkOptions hawk_options;
    hawk_options.run_id = options.run_id;
    hawk_options.work_dir = options.work_dir + "/hawk-configs";
    hawk_options.targets = probe_targets(profile);
    hawk_options.interrupted = options.interrupted;
    return std::make_unique<hawk::HawkBackend>(profile, std::move(hawk_options));
  }
  throw UserError(fmt::format("backend '{}' deploys nothing (local, hawk)", backend_name(backend)));
}

std::vector<EgressTarget> probe_targets(const scenario::DeploymentProfile& profile) {
  auto targets = profile_targets(profile);
  return profile.witness ? with_witness(std::move(targets), *profile.witness) : targets;
}

std::vector<EgressTarget> allowed_domain_targets(const scenario::DeploymentProfile& profile,
                                                 const std::vector<std::string>& allow_domains,
                                                 const nlohmann::json& expect) {
  std::vector<EgressTarget> out;
  if (!profile.egress) return out;
  for (const auto& d : allow_domains) {
    if (d.empty() || d.find('*') != std::string::npos) continue;
    out.push_back(EgressTarget{allowed_domain_target_name(d), d, profile.egress->allowed_domain_port, "tcp",
                               d, "internet"});
    auto namer = [](std::string_view domain, std::string_view suffix) {
      return allowed_domain_target_name(domain, suffix);
    };
    for (auto& t : domain_scope_targets(d, namer)) out.push_back(std::move(t));
    out.push_back(EgressTarget{namer(d, "-udp"), d, 53, "udp", d, "internet"});
    for (auto& t : domain_port_scope_targets(d, expect, local::unlisted_domain_port, namer))
      out.push_back(std::move(t));
  }
  return out;
}

}  // namespace isoharness::deploy
