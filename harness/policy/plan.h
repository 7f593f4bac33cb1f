// The isolation policy engine: resolves an eval-set config the way the platform does (its
// rules, level by level, in resolve_isolation.cc) into, per task item, the effective level,
// the runtime class, the rendered Kubernetes sandbox values (docs/CONTRACTS.md §1), the
// expectations a probe must observe (§2) and findings (known risks and notes).
#pragma once

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
  std::string
      runtime_class_source;  // isolation, option, hardened, task, deployment_default, none, gpu_exempt
  bool gpu = false;          // any service asks for a GPU
  EffectiveIsolation isolation;
  SharedJson values;  // CONTRACTS §1 (shared with items that render the same)
  SharedJson expect;  // CONTRACTS §2
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
