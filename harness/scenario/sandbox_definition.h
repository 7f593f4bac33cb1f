// A task's own sandbox definition, read the way the platform reads it: a Docker Compose
// file converted as the sandbox package (inspect_k8s_sandbox) converts it, or a values file
// of the sandbox chart (agent-env). docs/CONTRACTS.md "Task sandbox files" lists the rules.
//
// Both readers take text and return the definition or every problem found, each with the
// file, line and column of what it refuses; neither reads a file. A key that neither the
// package nor the chart takes, or that isoharness cannot carry to a backend, is refused by
// name; nothing is dropped silently except the keys the package itself ignores.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/scenario/scenario.h"

namespace isoharness::scenario {

// The chart's pattern for a service name (values.schema.json, services.propertyNames).
bool chart_service_name_ok(std::string_view name);

struct SandboxDefinition {
  // Every service in the chart's service shape (ServiceFacts::chart) with the facts the
  // policy reads (image, gpu, image_user_root, network_mode); services[0] is "default".
  std::vector<ServiceFacts> services;
  std::optional<std::string> runtime_class;  // the class the default service pins
  std::optional<std::string> workdir;        // the default service's working directory
  std::vector<std::string> allow_domains;    // allowDomains / x-inspect_k8s_sandbox.allow_domains
  std::vector<std::string> allow_cidr;       // allowCIDR (values files only)
  // allowDomainsPorts (values files only): each {port, protocol TCP/UDP/ANY, domain?}, as read.
  nlohmann::json allow_domains_ports = nlohmann::json::array();
  std::vector<std::string> allow_entities;            // allowEntities / x-inspect_k8s_sandbox.allow_entities
  nlohmann::json volumes = nlohmann::json::object();  // the chart's top-level named volumes
  std::vector<TaskBrought> brought;                   // passed through by the platform, each at its place
  std::vector<nlohmann::json> additional_resources;   // values additionalResources, as written
};

// The package's own output for a compose file: the chart values it writes (services in
// the chart's shape, volumes, allowDomains, allowEntities), without the chart's default
// service that Helm merges in later. For comparing with the package's fixture pairs.
nlohmann::json converted_values(const SandboxDefinition& d);

// The variables a text would take from the environment under envsubst (the runner's
// substitution of a compose file): ${NAME}, ${NAME:-default}, ${NAME-default} and $NAME,
// `$$` being a literal dollar; YAML comments are skipped. Each with its place in file.
std::vector<TaskBrought> environment_references(std::string_view text, const std::string& file);

struct SandboxReading {
  SandboxDefinition definition;    // meaningful only when errors is empty
  std::vector<Diagnostic> errors;  // every problem, in the order of the file
};

// A compose file (compose.yaml) -> the chart's values, as the sandbox package converts it.
[[nodiscard]] SandboxReading convert_compose(std::string_view text, const std::string& file);

// A values file of the agent-env chart, checked against the chart's schema.
[[nodiscard]] SandboxReading read_chart_values(std::string_view text, const std::string& file);

}  // namespace isoharness::scenario
