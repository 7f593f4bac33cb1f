// Provenance of parity timings. See parity_provenance.h.
#include "harness/runner/parity_provenance.h"

namespace isoharness::runner {

namespace {

// What the harness host reports of itself that a deployment's nodes have their own of.
constexpr const char* kHostRuntimeKeys[] = {"runc", "runsc", "runsc_platform", "runsc_network", "kernel"};

std::string string_at(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

nlohmann::json text_or_null(const std::string& s) {
  return s.empty() ? nlohmann::json() : nlohmann::json(s);
}

nlohmann::json cell_provenance(const scenario::DeploymentProfile& profile, const nlohmann::json& detail) {
  const nlohmann::json node =
      detail.is_object() ? detail.value("node", nlohmann::json::object()) : nlohmann::json();
  const std::string runtime = string_at(detail, "runtime");
  nlohmann::json out = {
      {"node_class", text_or_null(string_at(detail, "node_class"))},
      {"runtime_class", text_or_null(runtime)},
      {"handler", runtime.empty() ? nlohmann::json() : nlohmann::json(profile.handler_of(runtime))}};
  for (const char* k : {"kernel", "node_name", "boot_id", "cpus_allowed"})
    out[k] = text_or_null(string_at(node, k));
  return out;
}

}  // namespace

DeclaredPlatform declared_platform(const scenario::DeploymentProfile& profile) {
  DeclaredPlatform out;
  const auto it = profile.raw.is_object() ? profile.raw.find("platform") : profile.raw.end();
  if (profile.raw.is_object() && it != profile.raw.end() && it->is_object()) {
    out.node_image = string_at(*it, "node_image");
    const auto rv = it->find("runtime_versions");
    if (rv != it->end() && rv->is_object())
      for (const auto& [k, v] : rv->items())
        if (v.is_string()) out.runtime_versions[k] = v.get<std::string>();
  }
  // The node_image: section (what runtime_version judges) declares the image and its runc.
  if (profile.node_image) {
    if (out.node_image.empty()) out.node_image = profile.node_image->name;
    if (!profile.node_image->runc_version.empty())
      out.runtime_versions.emplace("runc", profile.node_image->runc_version);
  }
  return out;
}

nlohmann::json parity_provenance(const scenario::DeploymentProfile& profile, scenario::BackendKind backend,
                                 const nlohmann::json& cell_details, const nlohmann::json& context) {
  const bool local = backend == scenario::BackendKind::local;
  const DeclaredPlatform declared = declared_platform(profile);
  nlohmann::json runtime = nlohmann::json::object();
  if (local) {
    for (const char* k : {"runc", "runsc", "runsc_platform"})
      if (auto v = string_at(context, k); !v.empty()) runtime[k] = v;
  }
  for (const auto& [k, v] : declared.runtime_versions) runtime[k] = v;
  if (!declared.node_image.empty()) runtime["node_image"] = declared.node_image;
  nlohmann::json cells = nlohmann::json::object();
  if (cell_details.is_array())
    for (const auto& d : cell_details)
      if (auto name = string_at(d, "cell"); !name.empty()) cells[name] = cell_provenance(profile, d);
  return {{"backend", scenario::backend_name(backend)},
          {"deployment", profile.name},
          {"runtime", runtime},
          {"node_image", text_or_null(declared.node_image)},
          {"cells", cells},
          {"harness_host_versions_apply", local}};
}

void separate_harness_host(nlohmann::json& context, const scenario::DeploymentProfile& profile,
                           scenario::BackendKind backend) {
  separate_harness_host(context, declared_platform(profile), backend);
}

void separate_harness_host(nlohmann::json& context, const DeclaredPlatform& declared,
                           scenario::BackendKind backend) {
  if (backend == scenario::BackendKind::local || !context.is_object()) return;
  if (context.contains("harness_host")) return;  // already separated: the rule applies once
  nlohmann::json host = nlohmann::json::object();
  for (const char* k : kHostRuntimeKeys) {
    if (context.contains(k)) host[k] = context[k];
    context[k] = nullptr;
  }
  context["harness_host"] = host;
  for (const char* k : {"runc", "runsc"})
    if (auto it = declared.runtime_versions.find(k); it != declared.runtime_versions.end())
      context[k] = it->second;
  if (!declared.node_image.empty()) context["node_image"] = declared.node_image;
}

}  // namespace isoharness::runner
