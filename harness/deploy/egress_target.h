// Names of egress targets, one rule for every backend: isoprobe takes a target as
// NAME=HOST:PORT/PROTO and refuses a NAME that is not 1-64 letters, digits, '-', '_' or '.'
// (probes/core/target_spec.cc), so every backend names its targets through this file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/deploy/backend.h"

namespace isoharness::deploy {

// Whether isoprobe accepts this target name.
bool egress_target_name_ok(std::string_view name);

// The target that probes a domain an item allows: "allowed-<domain>", shortened with a
// digest of the whole domain when that would pass 64 characters. Same domain, same name.
std::string allowed_domain_target_name(std::string_view domain, std::string_view suffix = "");

// A name no allow list names but "*" (the reserved .invalid TLD): what a domain-fronting
// request presents on a listed domain's address.
inline constexpr const char* kFrontedName = "fronted.isoharness.invalid";

// How a listed domain is probed beyond "reachable": each target's name is
// namer(suffix), its host the domain (resolved in the sandbox), its role "internet".
//   -port-22        TCP 22, a port allow_domains does not open
//   -sni            a ClientHello on 443 naming the domain itself (reachable)
//   -sni-fronted    a ClientHello on 443 naming kFrontedName (blocked: Cilium checks SNI)
//   -host-fronted   an HTTP request on 80 with Host kFrontedName (blocked: Host checked)
// The fronted targets' domain is kFrontedName, so the plan judges the name presented.
std::vector<EgressTarget> domain_scope_targets(const std::string& domain,
                                               std::string (*namer)(std::string_view domain,
                                                                    std::string_view suffix));

// The ports allowDomainsPorts lists for a domain (`expect.allow_domains_ports`, each
// {port, protocol, domain?}; an entry naming another domain does not apply), probed
// beside it: namer("-port-<P>") TCP and namer("-udp-<P>") UDP on each listed entry
// (ANY: both; at most 8 entries), and namer("-port-unlisted") TCP on `unlisted(tcp ports
// listed)`, a port the list leaves closed. Host `host` (the domain, or its address where
// the backend probes UDP by address: udp_host), role "internet", domain `domain`.
std::vector<EgressTarget> domain_port_scope_targets(const std::string& domain, const nlohmann::json& expect,
                                                    int (*unlisted)(const std::vector<int>& tcp_ports),
                                                    std::string (*namer)(std::string_view domain,
                                                                         std::string_view suffix),
                                                    const std::string& udp_host = "");

}  // namespace isoharness::deploy
