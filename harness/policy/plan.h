// The isolation policy engine: resolves an eval-set config the way the platform does (its
// rules, level by level, in resolve_isolation.cc) into, per task item, the effective level,
// the runtime class, the rendered Kubernetes sandbox values (docs/CONTRACTS.md §1), the
// expectations a probe must observe (§2) and findings (known risks and notes).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "harness/common/error.h"
#include "harness/policy/shared_json.h"
#include "harness/scenario/scenario.h"

namespace isoharness::policy {

enum class Level { standard = 0, strict = 1 };
std::string_view level_name(Level level);

// Why the agent's service runs under its runtime class: the isolation block named it, a
// runtime_class option did, strict asked for the deployment's hardened class, the task pinned
// it, the deployment's default sandbox class applies, nothing applies, or a GPU keeps the
// node's default runtime.
enum class RuntimeClassSource { isolation, option, hardened, task, deployment_default, none, gpu_exempt };
std::string_view runtime_class_source_name(RuntimeClassSource source);  // "deployment_default", ...

enum class Severity { note, known_risk };
std::string_view severity_name(Severity severity);  // "note", "known_risk"

struct Finding {
  std::string code;     // stable, e.g. "gpu_without_syscall_boundary"
  std::string message;  // for people
  Severity severity = Severity::note;
};

// What the config asks for one item, after the eval set's block, the item's block and
// the options are merged.
struct EffectiveIsolation {
  Level level = Level::standard;
  std::optional<std::string> runtime_class;  // named by isolation.runtime_class (or the option)
  std::vector<std::string> allow_domains;
  std::vector<std::string> allow_cidr;
  bool non_root = false;
  bool read_only_root = false;
};

// Egress per way out (docs/CONTRACTS.md §2 "Ways out"): for each target the rendered
// values open, the ports and protocols on which it may be reached; every other port and
// protocol of that target, and every address no target names, is blocked. The metadata
// address is always a target with nothing open, whatever else is.
enum class Protocol { tcp, udp, any };       // any: TCP and UDP
std::string_view protocol_name(Protocol p);  // "tcp", "udp", "any"

enum class WayKind { domain, cidr, entity, metadata };
std::string_view way_kind_name(WayKind k);  // "domain", "cidr", "entity", "metadata"

// What blocks what a target does not open: the chart's network policy, or only a setting
// of the nodes (the chart opens it, as Cilium's world entity holds 169.254.169.254).
enum class Blocker { chart, node };
std::string_view blocker_name(Blocker b);  // "chart", "node"

struct OpenPort {
  Protocol protocol = Protocol::tcp;
  int port = 0;  // 1..65535; 0 = every port
};

struct WayOut {
  WayKind kind = WayKind::domain;
  std::string target;          // a domain pattern, a CIDR, an entity (world, all) or 169.254.169.254
  std::vector<OpenPort> open;  // where it may be reached; empty = nowhere
  // TLS SNI on TCP 443 and the HTTP Host on TCP 80 must name an allowed domain: a request
  // to this target's address carrying another name must fail.
  bool name_checked = false;
  Blocker blocked_by = Blocker::chart;  // what blocks every other port and protocol of it
  std::string why;                      // for people
};

struct EgressExpectations {
  std::vector<WayOut> ways;  // in the values' order; the metadata address last
};

// The ways out an item's rendered values (CONTRACTS §1) open, by the chart's rules.
EgressExpectations egress_ways(const nlohmann::json& values);

// One attempt to leave the sandbox, as a probe makes it. name: the SNI or Host sent (empty
// when none or not judged); domain/address as the target declares them.
struct WayQuery {
  std::string domain;
  std::string address;
  int port = 0;
  Protocol protocol = Protocol::tcp;
  std::string name;
};

// Whether the attempt may succeed under the expectations: some way matching the domain or
// address opens its port and protocol, and, on a name-checked port, the name sent is an
// allowed domain. The metadata address never.
bool way_permitted(const EgressExpectations& egress, const WayQuery& query);

// The plan JSON's item "egress" and back; the reader never throws: a malformed document
// yields nullopt and what is wrong in *problem.
nlohmann::json to_json(const EgressExpectations& egress);
std::optional<EgressExpectations> egress_from_json(const nlohmann::json& j, std::string* problem);

inline constexpr const char* kMetadataAddress = "169.254.169.254";

struct PlanItem {
  std::string id;  // stable and unique: <task>/<item index>-<item name>-<hash of package, args, sample_ids>
  std::string task;
  std::string item;
  std::string package;
  std::size_t task_index = 0;
  std::size_t item_index = 0;
  nlohmann::json args;        // null when absent
  nlohmann::json sample_ids;  // null when absent
  std::string description;    // describe_item(): names the item for people
  Level level = Level::standard;
  std::optional<std::string> runtime_class;  // of the agent's service; nullopt = node default
  RuntimeClassSource runtime_class_source = RuntimeClassSource::none;
  bool gpu = false;  // any service asks for a GPU
  EffectiveIsolation isolation;
  SharedJson values;  // CONTRACTS §1 (shared with items that render the same)
  SharedJson expect;  // CONTRACTS §2
  // CONTRACTS §2.1 "Ways out", shared by the items whose values are the same; null only
  // for an item that was never planned (then nothing may be reached).
  std::shared_ptr<const EgressExpectations> egress;
  std::vector<Finding> findings;
  Diagnostic where;  // file/line of the item (for reports)
};

struct Plan {
  std::string scenario_name;
  std::string scenario_path;
  bool bare_eval_set = false;
  scenario::Matrix matrix;
  std::vector<scenario::Workload> workloads;
  double tolerance = 1.10;
  std::string deployment_name;
  std::string deployment_path;
  std::vector<std::string> deployment_runtime_classes;
  std::optional<std::string> deployment_sandbox_runtime_class;
  std::optional<std::string> runtime_class_override;
  bool deny_known_risks = false;

  std::vector<PlanItem> items;
  std::vector<Diagnostic> errors;  // non-empty = refused

  bool accepted() const { return errors.empty(); }
  std::size_t known_risk_count() const;
};

struct PlanOptions {
  bool deny_known_risks = false;
  // As if the eval set's isolation named this runtime_class (used to run a standard item
  // under gVisor). An item's own runtime_class still takes precedence.
  std::optional<std::string> runtime_class_override;
};

// Never throws for semantic errors: they go in Plan::errors with file/line/item, all of
// them together. Known risks become errors under deny_known_risks.
Plan plan_scenario(const scenario::Scenario& scenario, const scenario::DeploymentProfile& deployment,
                   const PlanOptions& options);

// schema isoharness.plan/v1
nlohmann::json to_json(const Plan& plan);
// The same text as to_json(plan).dump(2) plus a newline, written item by item so that a
// large plan is never held a second time as one document.
void write_json(const Plan& plan, std::ostream& out);
// The rendered values per item as YAML: a mapping item id -> values.
std::string to_values_yaml(const Plan& plan);
// For people: a table per item, findings in view, a one-line verdict at the end.
std::string to_text(const Plan& plan, bool color);

// Whether the item's expectations allow reaching a target of the backend's world.
// role: "internet", "metadata", "cluster", "sandbox", "resolver"; domain and address as the
// target declares them (either may be empty).
bool egress_permitted(const nlohmann::json& expect, std::string_view role, std::string_view domain,
                      std::string_view address);
// The same, judged per port and protocol ("tcp", "udp", "icmp") by the chart's rules
// (CONTRACTS §2.1): a named domain only on TCP 80 and 443, a named range on every port and
// protocol, the metadata address never. For probes that know their port.
bool egress_permitted(const nlohmann::json& expect, std::string_view role, std::string_view domain,
                      std::string_view address, int port, std::string_view protocol);

// One way out as the egress probe tries it: the target's role, the name it presents (its
// domain, or the TLS server name / HTTP Host it sends), its address, transport and port.
enum class EgressTransport { tcp, udp, other };  // other: icmp, a DNS lookup, an exfil query
struct EgressWay {
  std::string_view role, domain, address;
  EgressTransport transport = EgressTransport::tcp;
  int port = 0;
};

// egress_permitted scoped by port and protocol, as the chart's allow lists are: a domain in
// allow_domains opens TCP 80 and 443 to that name only (plus the allow_domains_ports
// entries, TCP, UDP or ANY); an address inside allow_cidr, or an item that may reach
// everything, is open on every port and protocol; metadata, cluster and sandbox roles
// never. Transport `other` and non-internet roles keep egress_permitted's answer.
bool egress_permitted_on(const nlohmann::json& expect, const EgressWay& way);

}  // namespace isoharness::policy
