// A compose file -> the agent-env chart's values, the way the sandbox package converts it:
// services (one of them becomes "default"), top-level named volumes, and the
// x-inspect_k8s_sandbox allow lists. docs/CONTRACTS.md "Task sandbox files" lists the rules.
#include <set>

#include "harness/scenario/compose_service.h"
#include "harness/scenario/sandbox_definition.h"
#include "harness/scenario/sandbox_reading.h"

namespace isoharness::scenario {

namespace {

// Which service becomes "default": one named default, else the one marked x-default: true,
// else the first of several. A lone service keeps its name; Helm then merges the chart's
// own default service in beside it (finish_definition).
std::string compose_default_service(const nlohmann::json& services, const std::vector<std::string>& order,
                                    const SandboxProblems& problems) {
  std::vector<std::string> marked;
  for (const auto& name : order) {
    const auto& s = services[name];
    if (!s.is_object() || !s.contains("x-default")) continue;
    if (!s["x-default"].is_boolean())
      problems(pointer_join(pointer_join("/services", name), "x-default"), "x-default must be true or false");
    else if (s["x-default"] == true)
      marked.push_back(name);
  }
  if (services.contains("default")) {
    for (const auto& m : marked)
      problems(pointer_join(pointer_join("/services", m), "x-default"),
               "x-default: true on '" + m + "', but a service is named default");
    return "default";
  }
  if (marked.size() > 1)
    problems(pointer_join(pointer_join("/services", marked[1]), "x-default"),
             "x-default: true on both '" + marked[0] + "' and '" + marked[1] + "'; mark one");
  if (!marked.empty()) return marked[0];
  if (order.size() > 1) return order[0];
  return std::string();  // a lone service: nothing is renamed
}

// volumes: {name: null or {}}; the chart makes a claim for each.
std::set<std::string> compose_volumes(const nlohmann::json& v, const SandboxProblems& problems,
                                      SandboxDefinition& d) {
  std::set<std::string> names;
  if (!v.is_object()) {
    problems("/volumes", "volumes must map a volume name to nothing ({} or empty)");
    return names;
  }
  for (const auto& [name, value] : v.items()) {
    if (!value.is_null() && !(value.is_object() && value.empty())) {
      problems(pointer_join("/volumes", name),
               "volume '" + name + "' has settings; only plain named volumes convert (name: {} or name:)");
      continue;
    }
    names.insert(name);
    d.volumes[chart_volume_name(name)] = nlohmann::json::object();
  }
  return names;
}

// x-inspect_k8s_sandbox (or x-k8s) at the top: the task's allow lists.
void compose_extension(const nlohmann::json& v, const std::string& p, const SandboxProblems& problems,
                       SandboxDefinition& d) {
  if (!v.is_object()) {
    problems(p, "must be a mapping {allow_domains, allow_entities}");
    return;
  }
  for (const auto& [key, value] : v.items()) {
    const std::string kp = pointer_join(p, key);
    if (key == "allow_domains") {
      read_string_list(value, kp, problems, d.allow_domains);
    } else if (key == "allow_entities") {
      if (read_string_list(value, kp, problems, d.allow_entities)) note_entities(value, kp, problems, d);
    } else if (key == "automount_service_account_token" || key == "service_account_create" ||
               key == "service_account_name") {
      problems(kp, "'" + key +
                       "' is not carried by isoharness (it verifies a sandbox without Kubernetes API "
                       "credentials); leave it out");
    } else {
      problems(kp, "unsupported key '" + key +
                       "' in x-inspect_k8s_sandbox (known: allow_domains, allow_entities)");
    }
  }
}

void convert_services(const nlohmann::json& services, const std::set<std::string>& volumes,
                      const SandboxProblems& problems, SandboxDefinition& d) {
  if (!services.is_object() || services.empty()) {
    problems("/services", "services must map each service name to its settings");
    return;
  }
  const auto order = keys_in_file_order(services, "/services", problems.source);
  const std::string default_name = compose_default_service(services, order, problems);
  const ComposeServiceContext context{problems, volumes};
  std::vector<std::string> pointers;
  for (const auto& name : order) {
    const std::string p = pointer_join("/services", name);
    d.services.push_back(
        convert_compose_service(name, name == default_name ? "default" : name, services[name], p, context));
    pointers.push_back(p);
  }
  finish_definition(d, pointers, problems);
}

void convert_compose_document(const nlohmann::json& doc, const SandboxProblems& problems,
                              SandboxDefinition& d) {
  if (!doc.is_object() || !doc.contains("services")) {
    problems("", "a compose file needs services: (this file has none)");
    return;
  }
  std::set<std::string> volumes;
  if (doc.contains("volumes")) volumes = compose_volumes(doc["volumes"], problems, d);
  if (doc.contains("x-inspect_k8s_sandbox") && doc.contains("x-k8s"))
    problems("/x-k8s", "give x-inspect_k8s_sandbox or its alias x-k8s, not both");
  for (const auto& key : keys_in_file_order(doc, "", problems.source)) {
    const std::string p = pointer_join("", key);
    if (key == "x-inspect_k8s_sandbox" || key == "x-k8s") {
      compose_extension(doc[key], p, problems, d);
    } else if (key == "networks") {
      problems(p,
               "unsupported compose key 'networks' (per-network segmentation is not verified by isoharness; "
               "leave networks out)");
    } else if (key != "services" && key != "volumes" && key != "version") {
      problems(p, "unsupported compose key '" + key +
                      "' at the top of the file (known: services, volumes, "
                      "version, x-inspect_k8s_sandbox)");
    }
  }
  convert_services(doc["services"], volumes, problems, d);
}

}  // namespace

SandboxReading convert_compose(std::string_view text, const std::string& file) {
  SandboxReading r = read_sandbox_document(text, file, convert_compose_document);
  // The runner substitutes the text before the package converts it.
  auto refs = environment_references(text, file);
  r.definition.brought.insert(r.definition.brought.begin(), refs.begin(), refs.end());
  return r;
}

}  // namespace isoharness::scenario
