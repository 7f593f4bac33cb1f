// Scenario files and deployment profiles: what the harness reads before it plans.
//
// A scenario wraps a bare Hawk eval-set config (kept as JSON, every key passed through) with
// what the harness must know about each item's sandbox (services, GPU, image user, the
// runtime class and network mode the task pins), plus the matrix and workloads to run.
// The format is documented in scenarios/README.md. A bare eval-set config (a file with
// `tasks` at the top) loads as a scenario with default facts.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/scenario/source_map.h"

namespace isoharness::scenario {

// One service of an item's sandbox, as the task's own sandbox definition has it.
struct ServiceFacts {
  std::string name;  // "default" is the agent's sandbox
  std::optional<std::string> image;
  bool gpu = false;                         // the service asks for a GPU
  std::optional<bool> image_user_root;      // nullopt = not declared
  std::optional<std::string> network_mode;  // "none" / "bridge" when the task pins one
  // The service as the task's own sandbox definition states it (a compose file converted
  // the way the sandbox package converts it, or a chart values file), in the agent-env
  // chart's service shape (docs/CONTRACTS.md §1): image, command, args, workingDir, env,
  // resources, volumes, volumeMounts, readinessProbe, ... The policy lays the item's
  // isolation over it. An empty object for a service declared only by facts.
  nlohmann::json chart = nlohmann::json::object();
};

// What the harness knows about one task item's sandbox.
struct ItemFacts {
  std::vector<ServiceFacts> services;        // never empty; services[0] is "default"
  std::optional<std::string> runtime_class;  // runtime class the task pins for itself
  std::string workdir = "/home/agent";       // the agent's working directory
  std::vector<std::string> provider_tools;   // provider-executed tools the task enables
  bool declared = false;                     // facts came from the scenario (not defaults)
  // The task's own network allow lists (values allowDomains / allowCIDR / allowEntities, or
  // compose x-inspect_k8s_sandbox). They stand at standard; above it the item's isolation
  // replaces them (deny by default) and the plan says so as a finding.
  std::vector<std::string> task_allow_domains;
  std::vector<std::string> task_allow_cidr;
  std::vector<std::string> task_allow_entities;
  // The task's named volumes (the chart's top-level `volumes`: name -> {} or {spec}), which
  // its services mount by name (ServiceFacts::chart volumes "name:/path").
  nlohmann::json task_volumes = nlohmann::json::object();
  std::string sandbox_file;  // the task's own sandbox file ("" = facts only), as resolved
  std::string sandbox_kind;  // "compose" or "values" when sandbox_file is set
  std::string pointer;       // JSON pointer of the facts entry in the scenario
};

struct Matrix {
  std::vector<std::string> runtimes{"runc", "gvisor"};
  std::vector<std::string> node_classes{"tier"};
  int attempts = 1;
};

struct Workload {
  std::string name;
  double weight = 1.0;
};

struct Scenario {
  std::string name;  // the scenario's name (file stem when not given)
  std::string description;
  std::string path;  // the file as the user named it
  bool bare_eval_set = false;

  nlohmann::json eval_set;      // the eval-set config, every key kept
  SourceMap eval_set_source;    // marks of eval_set, pointers relative to eval_set
  std::string eval_set_prefix;  // pointer of eval_set inside its file ("" or "/eval_set")

  // facts[t][i] belongs to eval_set["tasks"][t]["items"][i]; shaped like the tasks.
  std::vector<std::vector<ItemFacts>> facts;

  Matrix matrix;
  std::vector<Workload> workloads;
  // Named mixes (`mixes:`): per task family, weights over the workloads above, so that e.g.
  // compile-heavy tasks are corrected by their own mix. The unnamed default mix is the
  // weights of `workloads`. See named_mixes.h.
  std::map<std::string, std::map<std::string, double>> mixes;
  double tolerance = 1.10;
  // `expect: refused`: the config must be refused by the platform (scenarios/refused/).
  bool expect_refused = false;
  std::string refusal_reason;             // `reason:`, a substring the refusal must contain
  bool refusal_or_never_running = false;  // `or_never_running: true`: accepted is fine if nothing runs
  SourceMap scenario_source;              // marks of the scenario file itself (matrix, facts)

  // The diagnostic for a place inside eval_set.
  Diagnostic at_eval_set(std::string_view pointer, std::string item, std::string message) const {
    return eval_set_source.diagnostic(eval_set_prefix + std::string(pointer), std::move(item),
                                      std::move(message));
  }
};

inline constexpr int kDefaultEgressDeadlineMs = 3000;
inline constexpr int kMaxEgressDeadlineMs = 20000;  // isoprobe's egress probe itself stops at 30 s

// The `hawk:` section of a deployment profile (backend hawk): how the harness drives the
// platform's CLI and logs in through its jumphost.
struct HawkSettings {
  std::string cli = "hawk";                         // program name or path
  std::string human;                                // a registered human whose key is used
  std::string identity_file = "~/.ssh/id_ed25519";  // that human's private key
  std::string jumphost_host_key;                    // pinned; "" only with --accept-new-host-keys
  std::string sandbox_host_keys = "first-use";      // "first-use" | "pinned"
  int start_timeout_s = 900;                        // until the sandbox answers ssh-command
  // Live evals one user may have at once on this platform: the run keeps at most this many
  // sandboxes in flight (0: not given; --parallel and --deploy-parallel bound the run).
  int max_live_evals = 0;
  // A start the platform refuses for its live-eval quota is back-pressure: tried again
  // (with jitter) for at most this long in all. Any other failed start is tried again at
  // most start_retries times, then the item's error carries the platform's message.
  int quota_wait_s = 3600;
  int start_retries = 2;
  // Users for an ssh-command line that names none, as OpenSSH would take them from the
  // user's config; empty: the local user.
  std::string jumphost_user;
  std::string sandbox_user;
  // Extra words for `hawk human eval start`, each flag checked against a list of flags
  // known to be safe to pass (harness/scenario/hawk_start_args.cc); paths made absolute.
  std::vector<std::string> start_args;
};

// The `egress:` section: what the probes try from inside, per deployment ("host:port").
struct EgressSettings {
  int allowed_domain_port = 443;  // port tried on each domain an item allows
  std::string internet_canary;    // a public host:port that must stay unreachable
  std::string metadata;           // the cloud metadata endpoint
  std::string cluster_api;        // the Kubernetes API as a sandbox would name it
};

// The `witness:` section (docs/CONTRACTS.md §4.4): an outside witness the deployment's
// operator runs, outside the sandboxes' reach, logging what arrives at its canary addresses
// and DNS zone in the witness log format (harness/deploy/witness_log.h). The harness adds
// probe targets aimed at it and reads its log over HTTP after each probe run.
struct WitnessSettings {
  std::string canary;   // IPv4 address the witness listens on (tcp_port, udp_ports, ICMP echo)
  std::string canary6;  // its IPv6 address ("" = none)
  std::string zone;     // a DNS zone whose queries the witness logs ("" = none)
  int tcp_port = 443;   // 0: no TCP target (TCP carries no nonce: matched on source address)
  std::vector<int> udp_ports{53, 443};
  // The log, from log.http "http://HOST[:PORT]/PATH": HOST an IPv4 address, or the word
  // `jumphost` for the jumphost of the sandbox's own ssh-command line (each eval's jumphost
  // serves its witness's log). Port 80 when not given.
  std::string log_host;
  int log_port = 80;
  std::string log_path;
  std::size_t max_log_bytes = std::size_t{48} << 20;  // more: the log is not judged on
  int log_timeout_s = 10;                             // the whole GET, connect to last byte
  int settle_ms = 300;        // pause after the probe before reading, for the last packets
  int clock_slack_ms = 1000;  // widens the probe's time window each way (clock skew)
};

// A node class's settings for the hawk backend: environment for the CLI and keys merged
// into every submitted eval-set config.
struct NodeClassSettings {
  std::vector<std::pair<std::string, std::string>> env;
  nlohmann::json config_overrides = nlohmann::json::object();
  // How the class is requested on the platform: the chart's per-service `nodeSelector`
  // (label -> value) and `tolerations` (Kubernetes tolerations), laid over every service of
  // the sandbox. Empty: the platform's default placement.
  nlohmann::json node_selector = nlohmann::json::object();
  nlohmann::json tolerations = nlohmann::json::array();
};

// The eval-set config key that carries a node class's placement to the platform:
// {nodeSelector, tolerations}, each present only when the profile names it.
inline constexpr const char* kSandboxPlacementKey = "sandbox_placement";

// Keys a node class's config_overrides may not set: what is submitted and its isolation.
bool config_override_reserved(std::string_view key);

struct DeploymentProfile {
  std::string name;
  std::string backend;                               // "local", "hawk", ...
  std::vector<std::string> runtime_classes;          // runtime classes the deployment offers
  std::optional<std::string> sandbox_runtime_class;  // the hardened class
  // Whether sandbox_runtime_class is also the default for sandboxes that pin none (as
  // hawk:sandboxRuntimeClassName is on the platform). Default true.
  bool sandbox_runtime_class_is_default = true;
  std::vector<std::pair<std::string, std::string>> runtime_handlers;  // class -> OCI runtime
  std::vector<std::string> node_classes;
  std::vector<std::pair<std::string, NodeClassSettings>> node_class_settings;  // env, config_overrides
  std::optional<HawkSettings> hawk;                                            // present when backend is hawk
  std::optional<EgressSettings> egress;    // absent: the backend's own world decides
  std::optional<WitnessSettings> witness;  // absent: no operator-run witness (hawk)
  // `witness: none`: the deployment declares it has no witness, and its egress checks rest
  // on the sandbox's own report (the summary says so). Without it, a deployment whose
  // backend has no witness gets `unwitnessed` egress checks.
  bool witness_none = false;
  std::string path;
  nlohmann::json raw;  // the whole profile, for backends' own keys
  // egress_deadline_ms: how long isoprobe gives all egress targets together. A dropped
  // target is reported as a timeout only when it passes, so every sandbox waits this long;
  // it must cover the slowest allowed target's answer on this deployment.
  int egress_deadline_ms = kDefaultEgressDeadlineMs;
  // node_mounts: mount points at which every sandbox of this deployment shows the node's own
  // filesystem by design (absolute paths; the plan allows them to host_path_mount). Absent:
  // the local backend's read-only host /usr and /etc/alternatives (its image is this
  // machine's OS), none on any other backend.
  std::vector<std::string> node_mounts;

  const NodeClassSettings* node_class(std::string_view wanted) const;

  bool offers(std::string_view runtime_class) const;
  // The OCI runtime behind a class: runtime_handlers, else the class name itself.
  std::string handler_of(std::string_view runtime_class) const;
  // Whether a class runs the gVisor kernel (its handler is runsc or named gvisor).
  bool is_gvisor(std::string_view runtime_class) const;
};

// Throws UserError with every problem found.
DeploymentProfile parse_deployment(std::string_view yaml_text, const std::string& path_for_messages);
DeploymentProfile load_deployment(const std::string& path);

// Throws UserError with every structural problem found (YAML syntax, shapes of tasks,
// items, facts, matrix). Semantic isolation rules are the policy engine's: they are
// reported by policy::plan_scenario, never thrown here.
Scenario parse_scenario(std::string_view yaml_text, const std::string& path_for_messages);
Scenario load_scenario(const std::string& path);

// Gives each item of `config` the sandbox facts of the same task item in `catalogue` (same
// task package and name, same item name, args and sample_ids), as a platform reads a task's
// own sandbox definition; items found nowhere keep theirs. Returns how many were taken.
std::size_t take_task_sandboxes(Scenario& config, const std::vector<Scenario>& catalogue);

// "task mtb, item bridge #0 (tasks[0].items[0]; package ...; args {...}; sample_ids [...])"
std::string describe_item(const nlohmann::json& eval_set, std::size_t task_index, std::size_t item_index);

}  // namespace isoharness::scenario
