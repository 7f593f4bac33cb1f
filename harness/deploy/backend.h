// The backend interface: deploy one sandbox for one plan item, runtime, node class and
// attempt; hand back how to reach it over SSH; destroy it. The local backend
// (deploy/local) builds real runc/runsc containers in namespaces on this machine; the hawk
// backend (deploy/hawk) drives a real deployment through the hawk CLI. deploy/factory
// picks one by name.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/deploy/kube_objects.h"
#include "harness/deploy/node_view.h"
#include "harness/deploy/sandbox_facts.h"
#include "harness/transport/ssh_route.h"

namespace isoharness::deploy {

// The SSH route types live in transport, which connects along them; deploy names them too.
using SshEndpoint = transport::SshEndpoint;
using SshRoute = transport::SshRoute;

// A named place the egress probe tries to reach, provided by the backend's world.
struct EgressTarget {
  std::string name;  // e.g. "target", "blocked", "metadata", "cluster-api", "dns"
  std::string host;  // a name (resolved by isoprobe's own resolver) or an address
  int port = 0;
  std::string proto;   // isoprobe's: "tcp", "dns", "http", "udp", "icmp", "exfil", "tls", "http-google",
                       // "http-imds-token"
  std::string domain;  // the domain the target stands for, when it has one
  std::string role;    // "internet", "metadata", "cluster", "sandbox", "resolver"
  // Where the backend's outside witness sees this target's packets arrive: the
  // destination address it logs, or for proto "exfil" the canary zone. Empty = no witness
  // covers the target, and its check rests on the sandbox's own report.
  std::string witness_address;
  // The name presented instead of host (proto "tls": the TLS server name; the http forms:
  // the Host header); "" = host. Such a target's domain is this name, so the plan judges
  // the name the request carries, not the address it went to.
  std::string server_name;
};

// One thing an outside witness saw arrive (docs/CONTRACTS.md §"Witness log").
struct WitnessRecord {
  long long unix_ms = 0;
  std::string kind;         // "tcp-syn", "udp", "icmp-echo", "dns"
  std::string source;       // the sender's address (dns: the resolver that asked)
  std::string destination;  // the address it was sent to (dns: the canary zone)
  int port = 0;             // tcp/udp destination port; 53 for dns; 0 for icmp
  std::string nonce;        // the "ihw-" nonce in its payload or query name; "" when none
  std::string name;         // dns: the query name; tcp-data: the TLS server name or HTTP Host
};

// What a backend's outside witness saw of one sandbox while its probe ran: the records
// from the sandbox's address or carrying its nonce, inside the probe's time window.
// One record of the drop point: where the network policy decided on a packet of the
// sandbox (locally the node namespace's nft rules; on a deployment Cilium's Hubble flows).
// A blocked way out passes only with such a record that the attempt left the sandbox and
// was stopped; the arrival witness (WitnessRecord) says whether it got through.
struct DropRecord {
  long long unix_ms = 0;    // when the decision was made; 0 when the witness only counts
  std::string proto;        // "tcp", "udp", "icmp", "icmp6"
  std::string source;       // the sandbox's address as the drop point saw it
  std::string destination;  // where the packet was going
  int port = 0;             // tcp/udp destination port; 0 for icmp
  bool dropped = true;      // false: the drop point forwarded it
  std::string reason;       // e.g. "POLICY_DENIED", "nft rule <name>"
  long long count = 1;      // packets this record stands for (a counter's increase)
  std::string way_out;      // the egress target's name when the witness knows it, else ""
  std::string name;         // the name the request presented (TLS server name, HTTP Host) when
                            // the drop point read it (a name-checking proxy), else ""
};

// What the drop point saw of one sandbox in the probe's window.
struct DropView {
  std::string witness;  // who saw it, for the evidence ("local node nft counters", "hubble")
  std::vector<DropRecord> records;
  bool complete = true;  // false: nothing may be judged on it (unreadable, not covering the window)
  std::string note;      // why not complete
};

struct WitnessView {
  std::string witness;  // who saw it, for the evidence
  std::string source;   // the sandbox's address as the witness sees it
  std::string source6;  // its IPv6 address, when it has one
  std::string nonce;    // the nonce the probe was given
  std::vector<WitnessRecord> records;
  bool complete = true;           // false: the log was full or unreadable; nothing may be judged on it
  std::string note;               // why not complete
  std::optional<DropView> drops;  // the drop point's record, when the backend has one
};

// The port an agent's probe tries on each sibling service. The local backend's siblings
// listen on it; on a platform the harness runs nothing in a task's sibling, so "connected"
// and "refused" (the sibling's own kernel answered) both mean the network let the agent
// through, while a policy that walls a service off drops the packets.
inline constexpr int kSiblingProbePort = 8080;

// A sibling as a backend that knows only its name reports it (no address, no exec).
inline SandboxFacts sibling_by_name(const std::string& service, const std::string& seen_in) {
  SandboxFacts f;
  f.service = service;
  f.port = kSiblingProbePort;
  f.seen_in = seen_in;
  return f;
}

struct SandboxRequest {
  std::string run_id;      // [a-z0-9]{1,8}; everything created carries it
  std::string name;        // unique within the run, [a-z0-9-]{1,24}
  std::string item_id;     // the plan item id, for labels and logs
  nlohmann::json values;   // the item's rendered sandbox values (docs/CONTRACTS.md §1)
  std::string node_class;  // a node class of the deployment profile
  int attempt = 1;
  std::string authorized_key;  // OpenSSH public key line the harness logs in with
  // Test seam only (`isoharness selftest`, harness/selftest; the local backend's names are
  // in deploy/local/weakenings.h): named weakenings the backend applies behind the plan's
  // back, to prove verify catches each. Empty in every real run. A backend refuses a name
  // it does not know; it never ignores one.
  std::vector<std::string> test_weakenings;

  // For backends that submit the eval-set config itself (hawk): the scenario's eval set,
  // where the item sits in it, and a runtime class to ask for in the item's isolation
  // (a matrix runtime its plan does not already give; empty = as written).
  nlohmann::json eval_set;
  std::size_t task_index = 0;
  std::size_t item_index = 0;
  std::string add_runtime_class;
};

struct SandboxHandle {
  std::string name;
  SshRoute route;
  // What the backend did, recorded in the result: the fields other modules read, typed
  // (runtime, addresses, the item's other services as `siblings`, each its own sandbox's
  // facts, ...), and in `extra` anything else a reader needs to interpret the
  // observations (platform, network mode, cpus, ...).
  SandboxFacts facts;
};

// What a platform did with a config it must refuse ("fail loudly").
struct RefusalProbe {
  bool refused = false;      // the submission failed; message holds the platform's words
  std::string message;       // e.g. "hawk human eval start exited 1: Error: …", or what was accepted
  bool sandbox_ran = false;  // a sandbox of the accepted eval reached Running
  std::string detail;        // the pods seen while watching, for the report
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;

  // Builds and starts the sandbox. Throws InfraError naming the control when anything
  // asked for by the values cannot be applied; nothing is left behind in that case.
  virtual SandboxHandle deploy(const SandboxRequest& request) = 0;

  // Removes everything the sandbox was made of. Never throws; idempotent.
  virtual void destroy(const SandboxHandle& handle) noexcept = 0;

  // The egress targets of this backend's world, named for isoprobe's --target flags.
  virtual std::vector<EgressTarget> egress_targets() const = 0;
  // The targets one item adds, from its plan's `expect` block (the local world: the ports
  // its allowDomainsPorts lists, and an unlisted one beside them). Default: none.
  virtual std::vector<EgressTarget> item_egress_targets(const nlohmann::json& /*expect*/) const { return {}; }

  // What the backend's outside witness saw of this sandbox between `from` and `to` (the
  // probe's run), keyed by its address and `nonce`. nullopt: this backend has no witness,
  // and egress checks rest on the sandbox's own report (marked so in their evidence).
  virtual std::optional<WitnessView> witness(const SandboxHandle&, const std::string& /*nonce*/,
                                             std::chrono::system_clock::time_point /*from*/,
                                             std::chrono::system_clock::time_point /*to*/) const {
    return std::nullopt;
  }

  // What the node sees of this sandbox's containers (node_view.h), read after its probe
  // ran. nullopt: this backend has no view of its nodes, and posture checks are then
  // `unwitnessed` unless the deployment profile says `node_view: none`.
  virtual std::optional<NodeView> node_view(const SandboxHandle&) const { return std::nullopt; }
  // What the Kubernetes API shows of this sandbox's eval, read after its probe ran
  // (docs/CONTRACTS.md §4.9). nullopt: the backend runs no Kubernetes objects (local).
  virtual std::optional<KubernetesApiView> kubernetes_api(const SandboxHandle&) const { return std::nullopt; }

  // Environment facts for the result's context block (runtime versions, platform, ...).
  virtual nlohmann::json context() const = 0;

  // Submits the request's eval set only to see whether the platform refuses it; an
  // accepted eval is watched for `watch` (is a sandbox ever Running?) and deleted at once.
  // Backends with no platform to ask return nullopt: the policy planner stands in there.
  virtual std::optional<RefusalProbe> submit_expecting_refusal(const SandboxRequest&, std::chrono::seconds) {
    return std::nullopt;
  }
};

}  // namespace isoharness::deploy
