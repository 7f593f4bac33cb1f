// `compose: PATH` and `values: PATH` in sandbox_defaults or a sandboxes[] entry: the task's
// own sandbox file replaces the item's sandbox facts (scenarios/README.md "A task's own
// sandbox file").
#include "harness/scenario/item_facts.h"
#include "harness/scenario/sandbox_definition.h"

namespace isoharness::scenario {

namespace {

std::string folder_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

void take_definition(SandboxDefinition d, const std::string& path, const std::string& kind, ItemFacts& f) {
  f.services = std::move(d.services);
  f.runtime_class = std::move(d.runtime_class);
  f.workdir = d.workdir.value_or(default_item_facts().workdir);
  f.task_allow_domains = std::move(d.allow_domains);
  f.task_allow_cidr = std::move(d.allow_cidr);
  f.task_allow_entities = std::move(d.allow_entities);
  f.task_allow_domains_ports = std::move(d.allow_domains_ports);
  f.task_volumes = std::move(d.volumes);
  f.task_brought = std::move(d.brought);
  f.sandbox_file = path;
  f.sandbox_kind = kind;
}

}  // namespace

bool apply_sandbox_file(const nlohmann::json& v, const std::string& pointer, const SourceMap& source,
                        ItemFacts& f, std::vector<Diagnostic>& errors) {
  auto err = [&](const std::string& p, std::string message) {
    errors.push_back(source.diagnostic(p, "", std::move(message)));
  };
  if (!v.is_object()) return false;
  const bool compose = v.contains("compose");
  if (!compose && !v.contains("values")) {
    if (f.sandbox_file.empty()) return false;
    for (const auto& key : facts_from_sandbox_file()) {
      if (v.contains(key))
        err(pointer_join(pointer, key),
            "'" + key + "' is decided by the item's " + f.sandbox_kind + " file " + f.sandbox_file +
                " (from sandbox_defaults); change it there, or give this entry its own "
                "compose: or values: file");
    }
    return false;
  }
  const std::string kind = compose ? "compose" : "values";
  const std::string kp = pointer_join(pointer, kind);
  if (compose && v.contains("values"))
    err(pointer_join(pointer, "values"), "give compose: or values:, not both");
  for (const auto& key : facts_from_sandbox_file()) {
    if (v.contains(key))
      err(pointer_join(pointer, key),
          "'" + key + "' is decided by the " + kind + " file; state it there, or drop " + kind + ":");
  }
  const auto& ref = v[kind];
  if (!ref.is_string() || ref.get<std::string>().empty()) {
    err(kp, kind + " must be the path of the task's " + (compose ? "compose.yaml" : "chart values file") +
                " (relative to this scenario file)");
    return true;
  }
  const std::string r = ref.get<std::string>();
  const std::string path = r.starts_with("/") ? r : folder_of(source.file()) + "/" + r;
  std::string text;
  try {
    text = read_input_file(path);
  } catch (const UserError&) {
    err(kp,
        "cannot read the " + kind + " file " + path + " (a relative path is relative to the scenario file)");
    return true;
  }
  SandboxReading reading = compose ? convert_compose(text, path) : read_chart_values(text, path);
  if (!reading.errors.empty()) {
    errors.insert(errors.end(), reading.errors.begin(), reading.errors.end());
    return true;
  }
  take_definition(std::move(reading.definition), path, kind, f);
  return true;
}

}  // namespace isoharness::scenario
