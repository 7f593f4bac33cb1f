// The local backend's half of `isoharness selftest`: named weakenings applied to one
// sandbox behind the plan's back (deploy::SandboxRequest::test_weakenings), each at the layer
// where a real misconfiguration would sit: the node's egress policy (nftables), the
// OCI spec the runtime receives, or the sandbox's sshd configuration. Weakenings of the rendered values
// themselves (a kept capability, a dropped runtime class) are made by harness/selftest before the request
// reaches the backend and need nothing here.
//
// Nothing of this runs unless a request names a weakening; an unknown name is refused
// (UserError) before anything is created. Every applied name is recorded in the
// sandbox's facts, so no weakened sandbox can pass for a real one in a result.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace isoharness::deploy::local {

struct BackendWeakening {
  const char* name;   // e.g. "nft:allow-metadata"
  const char* layer;  // "nftables", "oci" or "sshd"
  const char* does;   // one line: what changes in the sandbox
};

// One weakening per way out the witness must catch: UDP only, ICMP only,
// and an item resolver that forwards every name it does not answer to the canary zone's
// server (world.h, ResolverForwarding::every_name).
inline constexpr const char* kWeakenAllowUdp = "nft:allow-udp";
inline constexpr const char* kWeakenAllowIcmp = "nft:allow-icmp";
inline constexpr const char* kWeakenForwardEveryName = "dns:forward-every-name";
inline constexpr const char* kWeakenAllowIpv6 = "nft:allow-ipv6";  // a policy that covers only IPv4
// Other sandboxes' tcp 2222 open, as the platform's runner opens the `default` service's sshd
// port to every entity (other evals' sandboxes included).
inline constexpr const char* kWeakenAllowSandboxSsh = "nft:allow-sandboxes-2222";

// The allow list's scope (nft_rules.h): a listed domain's address open on every port and
// protocol (an L3-only policy), and the name proxy forwarding TLS / HTTP without reading
// the server name / the Host header (no L7 check: domain fronting goes through).
inline constexpr const char* kWeakenDomainsAnyPort = "nft:allow-domains-any-port";
inline constexpr const char* kWeakenSniUnchecked = "proxy:sni-not-checked";
inline constexpr const char* kWeakenHostUnchecked = "proxy:host-not-checked";
// allowDomainsPorts with one port more than listed: TCP unlisted_domain_port() (nft_rules.h)
// of every listed address opened beside the listed ones.
inline constexpr const char* kWeakenDomainsOneMorePort = "nft:allow-domains-one-more-port";

// Weakenings of the verifier's own evidence: each takes away what an egress verdict rests on,
// so the harness must end the checks that needed it unwitnessed or failed, never passed.
// witness:killed kills the world's witness once the sandbox is up and starts a new one when
// it goes (selftest runs it alone); witness:log-truncated empties the witness's log after the
// probe ran, before the harness reads it (alone too); witness:flooded sends UDP datagrams from
// the sandbox's address until the witness stops logging that source (its policy must let UDP
// out: nft:allow-udp); sandbox:sends-nothing drops every new connection and datagram in the
// sandbox's own network namespace, so nothing reaches the drop point or the world.
inline constexpr const char* kWeakenWitnessKilled = "witness:killed";
inline constexpr const char* kWeakenWitnessLogTruncated = "witness:log-truncated";
inline constexpr const char* kWeakenWitnessFlooded = "witness:flooded";
inline constexpr const char* kWeakenSendsNothing = "sandbox:sends-nothing";

class World;
// What the evidence weakenings act on once the sandbox is up.
struct EvidenceWeakeningTarget {
  World* world = nullptr;
  std::string netns;    // the sandbox's network namespace
  std::string address;  // its IPv4 address (the witness's source for what it sends)
};
// Applies the evidence weakenings named (none: nothing). Throws InfraError when one cannot
// be applied (the flood did not take the sandbox past its share), never weakens less.
void weaken_evidence(const std::vector<std::string>& names, const EvidenceWeakeningTarget& t);
// When the sandbox goes: a witness killed for it is started again.
void unweaken_evidence(const std::vector<std::string>& names, World& world);
// Before the witness's log is read for the sandbox: truncated under witness:log-truncated.
void weaken_witness_log(const std::vector<std::string>& names, const std::string& log_path);

// Every weakening the local backend knows.
const std::vector<BackendWeakening>& backend_weakenings();

// Throws UserError naming every name that is not in backend_weakenings().
void check_weakenings(const std::vector<std::string>& names, const std::string& sandbox);

// Rule bodies (nft syntax after "add rule <table> <chain> ") that the sandbox's egress
// chain accepts before anything else it checks (SandboxEgress::weakened_accepts).
std::vector<std::string> weakened_egress_accepts(const std::vector<std::string>& names);

struct SandboxEgress;
// Sets the allow-list weakenings above on the sandbox's egress (the named ones only).
void weaken_allow_list_scope(const std::vector<std::string>& names, SandboxEgress& e);

// Whether the sandbox's sshd serves SFTP: not under "sshd:no-sftp", which leaves the
// `Subsystem sftp` line out, so the harness must upload over an exec channel. Not a
// weakening of isolation: a sandbox the platform configured so still passes.
bool weakened_sshd_serves_sftp(const std::vector<std::string>& names);

// What an OCI weakening needs to know about the sandbox.
struct OciWeakeningTarget {
  std::string bundle_dir;  // removed with the sandbox
  std::string shared_dir;  // outlives the sandbox (removed with the run): a reused disk
  std::string home = "/home/agent";
  std::int64_t uid = 1000;
  std::int64_t gid = 1000;
};

// Where oci:reused-home keeps an item's home directory: under the run's directory (removed
// with the run), one per plan item, so every attempt of that item shares it.
std::string weakened_shared_dir(const std::string& run_dir, const std::string& item_id);

// Edits the config.json make_oci_config() built. May create files (a socket to mount, a
// directory to share between attempts); throws InfraError when it cannot.
void weaken_oci_config(const std::vector<std::string>& names, nlohmann::json& config,
                       const OciWeakeningTarget& t);

}  // namespace isoharness::deploy::local
