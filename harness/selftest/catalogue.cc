#include "harness/selftest/catalogue.h"

#include <algorithm>
#include <fstream>
#include <set>

#include "harness/common/error.h"
#include "harness/policy/chart_values.h"
#include "harness/selftest/escape_catalogue.h"
#include "harness/selftest/evidence_catalogue.h"

namespace isoharness::selftest {
namespace {

using nlohmann::json;

json& security(json& service) {
  return service["securityContext"];
}

// Keeps one capability besides drop ALL, as a renderer that forgot a line would.
std::function<void(json&)> keep_capability(const std::string& cap) {
  return [cap](json& service) { security(service)["capabilities"] = {{"drop", {"ALL"}}, {"add", {cap}}}; };
}

std::function<std::string(const std::string&)> applicable_everywhere() {
  return [](const std::string&) { return std::string(); };
}

std::function<std::string(const std::string&)> not_under(const std::string& runtime, const std::string& why) {
  return [runtime, why](const std::string& r) { return r == runtime ? why : std::string(); };
}

std::function<std::string(const std::string&)> everywhere_not(const std::string& why) {
  return [why](const std::string&) { return why; };
}

// kptr_restrict 2 hides kernel addresses even from CAP_SYSLOG: kept CAP_SYSLOG then
// exposes nothing, and there is nothing for the kallsyms check to catch.
std::string kallsyms_applicability(const std::string& runtime) {
  if (runtime == "gvisor")
    return "gVisor serves its own /proc/kallsyms, which lists no host symbol whatever the capabilities";
  std::ifstream in("/proc/sys/kernel/kptr_restrict");
  int level = -1;
  if (!(in >> level)) return "cannot read /proc/sys/kernel/kptr_restrict on this host";
  if (level >= 2) return "kernel.kptr_restrict = 2 on this host: addresses stay hidden even with CAP_SYSLOG";
  return "";
}

// Lists the local world's target domain in the item's allowDomains (see build()).
void allow_target_domain(json& values) {
  values["allowDomains"] = json::array({"target.example.com"});
}

// target.example.com listed with one port beyond 80/443 (TCP 8443, allowDomainsPorts): the
// probe tries it and its unlisted neighbour (deploy/local: domain_port_targets).
void allow_target_domain_port(json& values) {
  allow_target_domain(values);
  values["allowDomainsPorts"] = json::array({{{"port", 8443}, {"protocol", "TCP"}}});
}

// The process: capabilities, no_new_privs, seccomp.
void append_privileges(std::vector<Weakening>& w) {
  const auto everywhere = applicable_everywhere();
  w.push_back({.name = "cap_sys_admin_kept",
               .what = "CAP_SYS_ADMIN kept (drop ALL, add SYS_ADMIN)",
               .caught_by = {"capability:CAP_SYS_ADMIN", "capability_bounding", "capabilities"},
               .not_applicable = everywhere,
               .edit_values = keep_capability("SYS_ADMIN"),
               .quick = true,
               .judge = kJudgeNode});
  w.push_back(
      {.name = "net_raw_kept",
       .what = "CAP_NET_RAW kept under strict (drop ALL, add NET_RAW)",
       .caught_by = {"capability_bounding", "capabilities", "raw_sockets"},
       .not_applicable = not_under("gvisor",
                                   "runsc removes CAP_NET_RAW from every set unless started with "
                                   "--net-raw, so the kept capability never reaches a gVisor sandbox"),
       .edit_values = keep_capability("NET_RAW"),
       .judge = kJudgeNode});
  w.push_back({.name = "privilege_escalation_allowed",
               .what = "no no_new_privs (allowPrivilegeEscalation: true)",
               .caught_by = {"no_new_privs"},
               .not_applicable =
                   not_under("gvisor",
                             "this gVisor (runsc 20221219) sets no_new_privs in every sandbox "
                             "whatever the spec says (harness/selftest/README.md): escalation is neither "
                             "possible nor observable"),
               .edit_values = [](json& s) { security(s)["allowPrivilegeEscalation"] = true; },
               .judge = kJudgeNode});
  w.push_back({.name = "seccomp_unconfined",
               .what = "seccomp Unconfined on the host kernel",
               .caught_by = {"seccomp"},
               .not_applicable = not_under("gvisor",
                                           "runsc applies no OCI seccomp filter here (no --oci-seccomp): "
                                           "Seccomp reads 0 in every gVisor sandbox and verify excuses it as "
                                           "emulated; syscalls never reach the host kernel"),
               .edit_values =
                   [](json& s) {
                     security(s)["seccompProfile"] = {{"type", "Unconfined"}};
                   },
               .judge = kJudgeNode});
  w.push_back(
      {.name = "runc_instead_of_gvisor",
       .what = "runtime class dropped: runc while the plan says gVisor",
       .caught_by = {"kernel"},
       .not_applicable = not_under("runc",
                                   "the plan of the host-kernel item already names the node's default "
                                   "runtime"),
       .edit_values = [](json& s) { s["runtimeClassName"] = policy::kClusterDefault; },
       .quick = true,
       .judge = kJudgeNode});
}

// The user the sandbox runs as and its root filesystem.
void append_user_and_root(std::vector<Weakening>& w) {
  const auto everywhere = applicable_everywhere();
  w.push_back({.name = "root_under_non_root",
               .what = "uid 0 under non_root",
               .caught_by = {"uid"},
               .not_applicable =
                   everywhere_not("the local backend's sandbox process is sshd running as the sandbox "
                                  "user, which cannot serve a login as uid 0; it refuses runAsUser 0 "
                                  "before deploying (other_user_under_non_root changes the user instead)"),
               .judge = kJudgeNode});
  w.push_back({.name = "other_user_under_non_root",
               .what = "a different user (uid 1001) under non_root",
               .caught_by = {"uid"},
               .not_applicable = everywhere,
               .edit_values = [](json& s) { security(s)["runAsUser"] = 1001; },
               .judge = kJudgeNode});
  w.push_back({.name = "writable_root",
               .what = "writable root under read_only_root",
               .caught_by = {"root_filesystem", "root_not_writable"},
               .not_applicable = everywhere,
               .edit_values = [](json& s) { security(s)["readOnlyRootFilesystem"] = false; },
               .judge = kJudgeNode});
}

// Ways out the node's policy must close, and the allow list's scope.
void append_egress_and_allow_list(std::vector<Weakening>& w) {
  const auto everywhere = applicable_everywhere();
  w.push_back({.name = "egress_metadata",
               .what = "egress to the metadata address",
               .caught_by = {"egress:metadata"},
               .not_applicable = everywhere,
               .backend = {"nft:allow-metadata"},
               .quick = true,
               .judge = kJudgeWitness});
  // The allow list's scope. The selftest items allow no domain, so each of these also lists
  // target.example.com in the item's values (allowDomains) and weakens that list's scope.
  // Judged against the unweakened plan, the now-reachable target.example.com fails its own
  // checks too; the named check is the one that fails only when the scope itself is gone
  // (a listed domain keeps port 22, a forbidden server name, a forbidden Host blocked).
  w.push_back({.name = "allow_domains_any_port",
               .what = "an allow-listed domain reachable on every port (TCP 22), not TCP 80/443 only",
               .caught_by = {"egress:target-port-22"},
               .not_applicable = everywhere,
               .backend = {"nft:allow-domains-any-port"},
               .edit_item_values = allow_target_domain,
               .judge = kJudgeWitness});
  w.push_back({.name = "allow_domains_ports_one_more",
               .what = "an allow-listed domain open on one TCP port more than allowDomainsPorts lists",
               .caught_by = {"egress:target-port-unlisted"},
               .not_applicable = everywhere,
               .backend = {"nft:allow-domains-one-more-port"},
               .edit_item_values = allow_target_domain_port,
               .judge = kJudgeWitness});
  w.push_back({.name = "sni_not_checked",
               .what = "TLS to an allow-listed domain's address with a server name no list names",
               .caught_by = {"egress:target-sni-fronted"},
               .not_applicable = everywhere,
               .backend = {"proxy:sni-not-checked"},
               .edit_item_values = allow_target_domain,
               .judge = kJudgeWitness});
  w.push_back({.name = "host_header_not_checked",
               .what = "HTTP to an allow-listed domain's address with a Host no list names",
               .caught_by = {"egress:target-host-fronted"},
               .not_applicable = everywhere,
               .backend = {"proxy:host-not-checked"},
               .edit_item_values = allow_target_domain,
               .judge = kJudgeWitness});
  w.push_back({.name = "egress_unlisted_host",
               .what = "egress to an internet host no list names, under strict",
               .caught_by = {"egress:blocked-addr", "egress:blocked"},
               .not_applicable = everywhere,
               .backend = {"nft:allow-unlisted-host"},
               .judge = kJudgeWitness});
}

// Other sandboxes, the cluster API and DNS under strict.
void append_peers_and_cluster(std::vector<Weakening>& w) {
  const auto everywhere = applicable_everywhere();
  w.push_back({.name = "other_sandbox_reachable",
               .what = "another sandbox of the node reachable",
               .caught_by = {"egress:peer-sandbox", "egress:peer-sandbox6"},
               .not_applicable = everywhere,
               .backend = {"nft:allow-sandboxes"},
               .needs_peer = true,
               .judge = kJudgeSandbox});
  w.push_back({.name = "peer_ssh_port_open",
               .what = "other evals' sandboxes reachable on tcp 2222 (the platform's sshd policy)",
               .caught_by = {"peers:tcp-2222"},
               .not_applicable = everywhere,
               .backend = {"nft:allow-sandboxes-2222"},
               .needs_peer = true,
               .judge = kJudgeSandbox});  // a peer's sshd keeps no record: the prober's connect shows it
  w.push_back({.name = "peer_every_port_open",
               .what = "other evals' sandboxes reachable on every port (allowEntities: [cluster])",
               .caught_by = {"peers:serve-port"},
               .not_applicable = everywhere,
               .backend = {"nft:allow-sandboxes"},
               .needs_peer = true,
               .judge = kJudgeWitness});  // the peer's serve records the prober's nonce
  w.push_back({.name = "cluster_api_reachable",
               .what = "the cluster API reachable",
               .caught_by = {"egress:cluster-api"},
               .not_applicable = everywhere,
               .backend = {"nft:allow-cluster-api"},
               .judge = kJudgeWitness});
  w.push_back({.name = "dns_under_strict",
               .what = "DNS answers for an external name under strict",
               .caught_by = {"egress:dns", "egress:resolver"},
               .not_applicable = everywhere,
               .backend = {"nft:allow-dns"},
               .judge = kJudgeWitness});
}

// What of the host a runtime or spec can hand the sandbox.
void append_host_leaks(std::vector<Weakening>& w) {
  const auto everywhere = applicable_everywhere();
  w.push_back({.name = "runtime_socket_mounted",
               .what = "a container runtime's socket mounted in",
               .caught_by = {"runtime_socket"},
               .not_applicable = not_under("gvisor",
                                           "runsc's gofer (without --fsgofer-host-uds) refuses to mount a "
                                           "host socket and hides one inside a mounted directory (observed: "
                                           "nothing at the path): a runtime's socket cannot reach a gVisor "
                                           "sandbox here"),
               .backend = {"oci:runtime-socket"},
               .quick = true,
               .judge = kJudgeNode});
  w.push_back({.name = "host_pid_namespace",
               .what = "the host's PID namespace shared",
               .caught_by = {"pid_namespace"},
               .not_applicable = not_under("gvisor",
                                           "gVisor's sentry keeps its own process table whatever the spec "
                                           "says: the host's PID namespace cannot be shared into a gVisor "
                                           "sandbox"),
               .backend = {"oci:host-pid"},
               .judge = kJudgeNode});
  w.push_back({.name = "host_network_namespace",
               .what = "the host's network namespace shared",
               .caught_by = {"host_namespaces"},
               .not_applicable =
                   everywhere_not("the local backend reaches a sandbox only through its own namespace's "
                                  "address: one in the host's network namespace cannot be reached "
                                  "through the jumphost to be probed (host_uts_namespace shares a host "
                                  "namespace that can)"),
               .judge = kJudgeNode});
  w.push_back(
      {.name = "host_uts_namespace",
       .what = "the host's UTS namespace (hostname) shared",
       .caught_by = {"host_namespaces"},
       .not_applicable = not_under("gvisor",
                                   "runsc gives a sandbox without a UTS namespace an empty hostname of "
                                   "its own (observed), never the host's"),
       .backend = {"oci:host-uts"},
       .judge = kJudgeNode});
  w.push_back({.name = "host_device",
               .what = "a host device (/dev/kmsg) passed in",
               .caught_by = {"host_devices"},
               .not_applicable = not_under("gvisor",
                                           "runsc does not pass linux.devices into the sandbox: /dev holds "
                                           "only gVisor's own devices (observed: no kmsg)"),
               .backend = {"oci:host-device"},
               .judge = kJudgeNode});
}

// Kernel addresses, and the sibling weakening left out here.
void append_kernel_and_siblings(std::vector<Weakening>& w) {
  w.push_back({.name = "kallsyms_unmasked",
               .what = "/proc/kallsyms addresses readable (CAP_SYSLOG kept)",
               .caught_by = {"kallsyms"},
               .not_applicable = kallsyms_applicability,
               .edit_values = keep_capability("SYSLOG"),
               .judge = kJudgeNode});
  w.push_back(
      {.name = "debugfs_mounted",
       .what = "debugfs mounted at /sys/kernel/debug",
       .caught_by = {"debugfs"},
       .not_applicable = not_under("gvisor",
                                   "gVisor has no debugfs: runsc starts the sandbox without the mount "
                                   "and /sys/kernel/debug does not exist (observed)"),
       .backend = {"oci:debugfs"},
       .judge = kJudgeNode});
  // The local backend knows the weakening "none-sibling-reachable", and verify catches it
  // with sibling:<service> (tests/system/sibling_system_test.cpp proves both). To run it
  // here, add a `none` sibling named scorer to scenarios/selftest/hardened.yaml and set
  // .backend = {"none-sibling-reachable"}.
  w.push_back(
      {.name = "none_sibling_reachable",
       .what = "a networkIsolated (network_mode none) sibling service reachable from the agent",
       .caught_by = {"sibling:scorer"},
       .not_applicable = everywhere_not("the selftest scenario (scenarios/selftest/hardened.yaml) has no "
                                        "network_mode none sibling to open yet; sibling_system_test applies "
                                        "none-sibling-reachable and sees sibling:scorer fail")});
}

// Ways out only the outside witness sees, and a reused disk.
void append_witnessed_ways_out(std::vector<Weakening>& w) {
  const auto everywhere = applicable_everywhere();
  // Ways out a policy written for TCP connects leaves open, each to be caught by the world's
  // outside witness (the sandbox's own report is not needed to catch them: judge witness).
  w.push_back({.name = "egress_udp_open",
               .what = "UDP open to the internet (a policy that filters only TCP)",
               .caught_by = {"egress:canary-udp", "egress:canary-udp-443"},
               .not_applicable = everywhere,
               .backend = {"nft:allow-udp"},
               .judge = kJudgeWitness});
  w.push_back(
      {.name = "egress_icmp_open",
       .what = "ICMP echo open to the internet (ping tunnels)",
       .caught_by = {"egress:canary-icmp"},
       .not_applicable = not_under("gvisor",
                                   "runsc --network=host (host-in-netns) serves only TCP and UDP sockets: "
                                   "ICMP datagram, raw and packet sockets fail with EAFNOSUPPORT "
                                   "(observed), so no echo can leave a gVisor sandbox here"),
       .backend = {"nft:allow-icmp"},
       .judge = kJudgeWitness});
  w.push_back({.name = "egress_ipv6_open",
               .what = "IPv6 open to the internet (a dual-stack policy that covers only IPv4)",
               .caught_by = {"egress:canary6-tcp", "egress:canary6-udp", "egress:canary6-icmp"},
               .not_applicable = everywhere,
               .backend = {"nft:allow-ipv6"},
               .judge = kJudgeWitness});
  w.push_back({.name = "resolver_forwards_every_name",
               .what = "the sandbox's resolver forwards every name upstream (DNS exfiltration)",
               .caught_by = {"egress:dns-exfil"},
               .not_applicable = everywhere,
               .backend = {"dns:forward-every-name"},
               .judge = kJudgeWitness});
  w.push_back({.name = "attempt_disk_reused",
               .what = "attempt 2 reuses attempt 1's home directory",
               .caught_by = {"fresh_sandbox"},
               .not_applicable = everywhere,
               .backend = {"oci:reused-home"},
               .attempts = 2,
               .judge = kJudgeSandbox});  // the harness's marker, read by its own command in the sandbox
}

// The catalogue, in report order: one designated initializer per weakening, grouped by
// what each weakens.
std::vector<Weakening> build() {
  std::vector<Weakening> w;
  append_privileges(w);
  append_user_and_root(w);
  append_egress_and_allow_list(w);
  append_peers_and_cluster(w);
  append_host_leaks(w);
  append_kernel_and_siblings(w);
  append_witnessed_ways_out(w);
  append_escape_weakenings(w);
  append_evidence_weakenings(w);
  return w;
}

}  // namespace

const std::vector<Weakening>& catalogue() {
  static const std::vector<Weakening> all = [] {
    auto w = build();
    std::set<std::string> names;
    for (const auto& e : w) ISOHARNESS_CHECK(names.insert(e.name).second);
    return w;
  }();
  return all;
}

std::vector<const Weakening*> select(const std::vector<std::string>& names, bool quick) {
  std::vector<const Weakening*> out;
  std::string unknown;
  for (const auto& n : names) {
    auto it =
        std::find_if(catalogue().begin(), catalogue().end(), [&](const Weakening& w) { return w.name == n; });
    if (it == catalogue().end()) unknown += (unknown.empty() ? "" : ", ") + n;
  }
  if (!unknown.empty()) {
    std::string known;
    for (const auto& w : catalogue()) known += (known.empty() ? "" : ", ") + w.name;
    throw UserError("--only: no weakening named " + unknown + " (known: " + known + ")");
  }
  for (const auto& w : catalogue()) {
    bool chosen = names.empty() ? (!quick || w.quick) : std::count(names.begin(), names.end(), w.name) > 0;
    if (chosen) out.push_back(&w);
  }
  return out;
}

}  // namespace isoharness::selftest
