// Scenario files and deployment profiles: what the harness reads before it plans.
//
// A scenario wraps a bare Hawk eval-set config (kept as JSON, every key passed through) with
// what the harness must know about each item's sandbox (services, GPU, image user, the
// runtime class and network mode the task pins), plus the matrix and workloads to run.
// The format is documented in scenarios/README.md. A bare eval-set config (a file with
// `tasks` at the top) loads as a scenario with default facts.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/scenario/backend_kind.h"
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
  // The chart's own default service (its values.yaml), which Helm merges in because the
  // task's sandbox file names no service default. Inspect runs the agent in the service
  // named default, so the agent runs here, not in any service the file names.
  bool from_chart_values = false;
};

// The image of the chart's own default service (agent-env values.yaml).
inline constexpr const char* kChartDefaultImage = "python:3.12-bookworm";

// What a task brings with its own sandbox that the platform passes through as written
// (docs/CONTRACTS.md §8): the policy refuses it under strict and flags it at standard,
// except environment references, which are flagged at every level.
enum class BroughtKind {
  environment_reference,  // ${VAR} / $VAR in a compose file: the runner fills it from its environment
  additional_resources,   // values additionalResources: extra Kubernetes objects (network policies...)
  entity,                 // allowEntities / allow_entities naming a Cilium entity other than world
  capability,             // securityContext capabilities.add or privileged: true
};
std::string_view brought_kind_name(BroughtKind kind);  // "environment_reference", ...

struct TaskBrought {
  BroughtKind kind = BroughtKind::environment_reference;
  std::string what;  // the variable, entity or capability ("privileged" for privileged: true)
  Diagnostic where;  // file, line and column in the task's sandbox file; message says what it is
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
  // allowDomainsPorts of a task's values file: {port, protocol, domain?} each (standard only).
  nlohmann::json task_allow_domains_ports = nlohmann::json::array();
  // The task's named volumes (the chart's top-level `volumes`: name -> {} or {spec}), which
  // its services mount by name (ServiceFacts::chart volumes "name:/path").
  nlohmann::json task_volumes = nlohmann::json::object();
  // What the task's sandbox file brings that the platform passes through (see TaskBrought).
  std::vector<TaskBrought> task_brought;
  // `sandbox: local`: the task runs its tools in the runner's own pod, with no sandbox at
  // all (the platform passes a local sandbox through). Set: the fact's place (shared, as
  // facts are copied per item of large eval sets).
  std::shared_ptr<const Diagnostic> local_sandbox;
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
  // A named mix's `compute_fraction` (the long form {weights: {...}, compute_fraction: f}):
  // the share of such a task family's human time that is sandbox compute, for
  // `isoharness baselines` (a record's own value wins). Mixes without one are absent.
  std::map<std::string, double> mix_compute_fractions;
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
inline constexpr int kDefaultBlockedDeadlineMs = 300;
inline constexpr int kMinBlockedDeadlineMs = 50;

// The `hawk:` section of a deployment profile (backend hawk): how the harness drives the
// platform's CLI and logs in through its jumphost.
// The human-agent solver an eval-set config names itself (`hawk.human_agent`), for a start
// with `--no-rewrite`, where the platform keeps the config's solvers as they are.
struct HumanAgentSolver {
  std::string package;  // pip-installable package, e.g. "inspect-ai" or a git URL
  std::string name;     // the solver's registered name, e.g. "human_agent"
  nlohmann::json args = nlohmann::json::object();
};

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
  // A sandbox pod held short of running is the item's error once it has been held so
  // (docs/CONTRACTS.md §4.1): Pending with FailedScheduling for unschedulable_grace_s; an
  // image that cannot be pulled or a container config error for stuck_grace_s; a
  // container in CrashLoopBackOff after crash_loop_restarts restarts.
  int unschedulable_grace_s = 300;
  int stuck_grace_s = 60;
  int crash_loop_restarts = 3;
  // The solver the one-item config names, when given (required with --no-rewrite).
  std::optional<HumanAgentSolver> human_agent;
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
// The witness log read over SSH instead (log.ssh): the file at `path` on `host`, read with
// SFTP at the harness's offset, the server's host key pinned.
struct WitnessLogSsh {
  std::string host;  // an IPv4 address
  int port = 22;
  std::string user;
  std::string identity_file;  // an unencrypted ed25519/ECDSA private key, absolute path
  std::string host_key;       // OpenSSH public key line, required
  std::string path;           // absolute path of the log on the server
};

struct WitnessSettings {
  std::string canary;   // IPv4 address the witness listens on (tcp_port, udp_ports, ICMP echo)
  std::string canary6;  // its IPv6 address ("" = none)
  std::string zone;     // a DNS zone whose queries the witness logs ("" = none)
  int tcp_port = 443;   // 0: no TCP target (TCP carries no nonce: matched on source address)
  std::vector<int> udp_ports{53, 443};
  // The log, from log.http "http://HOST[:PORT]/PATH": HOST an IPv4 address, or the word
  // `jumphost` for the jumphost of the sandbox's own ssh-command line (the platform's shared
  // jumphost, which serves the witness's log). Port 80 when not given.
  std::string log_host;
  int log_port = 80;
  std::string log_path;
  // Or (exactly one of the two) the log file read over SSH; then no token (the SSH
  // channel, not a MAC, authenticates what is read: docs/CONTRACTS.md §4.4.1).
  std::optional<WitnessLogSsh> log_ssh;
  // The log is read incrementally (from the byte after the last line read, wire format in
  // deploy/witness_wire.h): at most this many bytes per probe run; a log further behind is
  // not judged on for that run.
  std::size_t max_log_bytes = std::size_t{48} << 20;
  int log_timeout_s = 10;  // each GET, connect to last byte
  // The token the witness MACs its lines with: a file holding it, or an environment
  // variable of the harness's naming it. Exactly one; never printed.
  std::string log_token_file;
  std::string log_token_env;
  int settle_ms = 300;        // pause after the probe before reading, for the last packets
  int clock_slack_ms = 1000;  // widens the probe's time window each way (clock skew)
};

// The `hubble:` section (docs/CONTRACTS.md §4.6): where the deployment's Cilium Hubble flows
// come from, the drop point's witness on a deployment. Exactly one of `command` (an argv,
// run without a shell where Hubble Relay is reachable; the harness appends `--since T
// --until T` in RFC 3339) and `file` (flows exported beforehand, JSON Lines).
struct HubbleSettings {
  std::vector<std::string> command;
  std::string file;
  int timeout_s = 30;                             // the whole command
  std::size_t max_bytes = std::size_t{64} << 20;  // of its output or the file; more: not judged on
  std::size_t max_lines = 500000;
  // The command asks from this long before the probe's window: a flow that old shows that
  // Hubble's buffer still reaches back past the window's start.
  int lead_s = 60;
};

// The `kubernetes_api:` section (docs/CONTRACTS.md §4.9): where the Kubernetes API's
// objects of each eval come from, read after its probe ran. Each source is exactly one of
// `command` (an argv run without a shell; in every word `{namespace}` and `{eval_set_id}`
// are replaced by the sandbox pod's namespace and the eval set's id) and `file` (an
// absolute path, the same placeholders replaced).
struct KubeApiSource {
  std::vector<std::string> command;
  std::string file;
};

struct KubernetesApiSettings {
  KubeApiSource pods;                             // a v1 List of the eval's Pods (required)
  std::optional<KubeApiSource> runtime_classes;   // RuntimeClass objects (a List or one)
  std::optional<KubeApiSource> network_policies;  // the namespace's CiliumNetworkPolicy List
  int timeout_s = 30;                             // each command
  std::size_t max_bytes = std::size_t{16} << 20;  // each command's output or file
};

// The `node_image:` section: the image the deployment's nodes run and the runc it ships,
// as the operator declares them (from inside a sandbox the node's runtime is not
// observable). runtime_version judges these.
// An escape of one component of the runtime stack the deployment knowingly runs open to
// (`accepted_runtime_escapes:`): the runtime_version check names it and the reason in every
// report instead of failing on it.
struct AcceptedEscape {
  std::string cve;        // CVE-YYYY-NNNN+
  std::string reason;     // why the deployment runs it anyway, for people
  std::string component;  // containerd, runc, crun, runsc or nvidia-container-toolkit
};

// The components of the runtime stack that have an escape table (the component words of
// accepted_runtime_escapes; harness/verify/runtime_escapes.h has the same five).
inline constexpr const char* kRuntimeStackComponents[] = {"containerd", "runc", "crun", "runsc",
                                                          "nvidia-container-toolkit"};
// A check whose failure the deployment knowingly runs with (`accepted_risks:`), by the
// check's name: the check then passes as a known risk naming the reason, in every report
// and the summary line. Only the checks accepted_risk_checks() names may be listed.
struct AcceptedRisk {
  std::string check;   // a check's control, e.g. "peers:tcp-2222"
  std::string reason;  // why the deployment runs with it, for people
};
// The checks a profile may accept by name: those whose failure is a property of the
// platform the operator may decide to live with (other evals reaching a sandbox).
const std::vector<std::string>& accepted_risk_checks();

struct NodeImageSettings {
  std::string name;          // the image, e.g. "ubuntu-2404-eks-1.31-v20251120"
  std::string runc_version;  // the upstream version its runc reports ("1.3.3"); "" when the nodes run crun
  std::string runc_package;  // its distribution package version ("1.1.12-0ubuntu3.1"), "" when none
  // The rest of the stack, each optional ("" = not declared, runtime_version says n/a).
  std::string containerd_version;
  std::string containerd_package;
  std::string crun_version;
  std::string crun_package;
  std::string runsc_version;  // release-20240513.0 upstream, 0.0~20221219.0 Debian's
  std::string runsc_package;
  std::string nvidia_container_toolkit_version;
  std::string nvidia_container_toolkit_package;
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
  std::optional<BackendKind> backend;                // local or hawk; absent: the profile names none
  std::vector<std::string> runtime_classes;          // runtime classes the deployment offers
  std::optional<std::string> sandbox_runtime_class;  // the hardened class
  // Whether sandbox_runtime_class is also the default for sandboxes that pin none (as
  // hawk:sandboxRuntimeClassName is on the platform). Default true.
  bool sandbox_runtime_class_is_default = true;
  std::vector<std::pair<std::string, std::string>> runtime_handlers;  // class -> OCI runtime
  std::vector<std::string> node_classes;
  std::vector<std::pair<std::string, NodeClassSettings>> node_class_settings;  // env, config_overrides
  std::optional<HawkSettings> hawk;                                            // present when backend is hawk
  std::optional<EgressSettings> egress;         // absent: the backend's own world decides
  std::optional<WitnessSettings> witness;       // absent: no operator-run witness (hawk)
  std::optional<HubbleSettings> hubble;         // absent: no Hubble flows (the drop point unwitnessed)
  std::optional<NodeImageSettings> node_image;  // absent: the node's runtime is not declared
  // absent: the API's objects are not read (the summary names the view as absent)
  std::optional<KubernetesApiSettings> kubernetes_api;
  // `kubernetes_api: none`: the deployment declares it has no view of the Kubernetes API.
  bool kubernetes_api_none = false;
  std::vector<AcceptedEscape> accepted_runtime_escapes;  // empty: every open escape fails
  // `runsc_max_age_days:` a gVisor runtime released longer ago than this is a known risk
  // of runtime_version (1 to 36500; default 365).
  int runsc_max_age_days = 365;
  std::vector<AcceptedRisk> accepted_risks;  // empty (the default): nothing accepted
  // `witness: none`: the deployment declares it has no witness, and its egress checks rest
  // on the sandbox's own report (the summary says so). Without it, a deployment whose
  // backend has no witness gets `unwitnessed` egress checks.
  bool witness_none = false;
  // `node_view: none`: the deployment declares it has no view of its nodes, and its posture
  // checks rest on the sandbox's own report (the summary counts them as self-reported).
  // Without it, a deployment whose backend has no node view gets `unwitnessed` posture checks.
  bool node_view_none = false;
  std::string path;
  nlohmann::json raw;  // the whole profile, for backends' own keys
  // egress_deadline_ms: how long isoprobe gives all egress targets together. A dropped
  // target is reported as a timeout only when it passes, so every sandbox waits this long;
  // it must cover the slowest allowed target's answer on this deployment.
  int egress_deadline_ms = kDefaultEgressDeadlineMs;
  // egress_blocked_deadline_ms: how long isoprobe waits on each way out the plan closes,
  // when the deployment's witnesses judge egress: the drop point's record proves the attempt
  // left and was stopped, and the arrival witness would still record a late arrival, so the
  // sandbox's own timeout adds nothing. Capped by egress_deadline_ms; under `witness: none`
  // (the sandbox's word is all there is) every target gets egress_deadline_ms.
  int egress_blocked_deadline_ms = kDefaultBlockedDeadlineMs;
  // peers_per_sandbox: how many other live sandboxes (other evals') each sandbox tries on
  // 2222 and the peer-serve port (harness/verify/peer_checks.h); 0 .. 16, 0 = none.
  int peers_per_sandbox = 2;
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
