// Deployment profiles (scenarios/deployments/*.yaml). The policy reads runtime_classes,
// sandbox_runtime_class, sandbox_runtime_class_is_default and runtime_handlers; every other
// key belongs to a backend and is kept untouched in DeploymentProfile::raw.
#include <algorithm>
#include <functional>
#include <regex>

#include "harness/scenario/profile_sections.h"
#include "harness/scenario/scenario.h"

namespace isoharness::scenario {

namespace {

bool valid_class_name(const std::string& s) {
  // Kubernetes object names (RFC 1123 subdomain).
  static const std::regex re("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");
  return !s.empty() && s.size() <= 253 && std::regex_match(s, re);
}

}  // namespace

bool DeploymentProfile::offers(std::string_view runtime_class) const {
  return std::find(runtime_classes.begin(), runtime_classes.end(), runtime_class) != runtime_classes.end();
}

std::string DeploymentProfile::handler_of(std::string_view runtime_class) const {
  for (const auto& [cls, handler] : runtime_handlers) {
    if (cls == runtime_class) return handler;
  }
  return std::string(runtime_class);
}

const NodeClassSettings* DeploymentProfile::node_class(std::string_view wanted) const {
  for (const auto& [name, settings] : node_class_settings)
    if (name == wanted) return &settings;
  return nullptr;
}

bool DeploymentProfile::is_gvisor(std::string_view runtime_class) const {
  std::string h = handler_of(runtime_class);
  return h == "runsc" || h == "gvisor" || h.find("gvisor") != std::string::npos ||
         h.find("runsc") != std::string::npos;
}

namespace {

// egress_deadline_ms (the egress probe's fan-out): whole milliseconds, 100 .. kMaxEgressDeadlineMs.
template <typename Err>
void read_egress_deadline(const nlohmann::json& v, DeploymentProfile& p, Err& err) {
  if (!v.contains("egress_deadline_ms")) return;
  const auto& d = v["egress_deadline_ms"];
  if (!d.is_number_integer() || d.get<long long>() < 100 || d.get<long long>() > kMaxEgressDeadlineMs) {
    err("/egress_deadline_ms", "egress_deadline_ms must be a whole number of milliseconds from 100 to " +
                                   std::to_string(kMaxEgressDeadlineMs) + ", got " + brief_json(d));
    return;
  }
  p.egress_deadline_ms = d.get<int>();
}

// egress_blocked_deadline_ms (the wait on a way out the plan closes): whole milliseconds,
// kMinBlockedDeadlineMs .. kMaxEgressDeadlineMs.
template <typename Err>
void read_blocked_deadline(const nlohmann::json& v, DeploymentProfile& p, Err& err) {
  if (!v.contains("egress_blocked_deadline_ms")) return;
  const auto& d = v["egress_blocked_deadline_ms"];
  if (!d.is_number_integer() || d.get<long long>() < kMinBlockedDeadlineMs ||
      d.get<long long>() > kMaxEgressDeadlineMs) {
    err("/egress_blocked_deadline_ms",
        "egress_blocked_deadline_ms must be a whole number of milliseconds from " +
            std::to_string(kMinBlockedDeadlineMs) + " to " + std::to_string(kMaxEgressDeadlineMs) + ", got " +
            brief_json(d));
    return;
  }
  p.egress_blocked_deadline_ms = d.get<int>();
}

// peers_per_sandbox: a whole number from 0 to 16.
template <typename Err>
void read_peers_per_sandbox(const nlohmann::json& v, DeploymentProfile& p, Err& err) {
  if (!v.contains("peers_per_sandbox")) return;
  const auto& k = v["peers_per_sandbox"];
  if (!k.is_number_integer() || k.get<long long>() < 0 || k.get<long long>() > 16) {
    err("/peers_per_sandbox", "peers_per_sandbox must be a whole number from 0 to 16, got " + brief_json(k));
    return;
  }
  p.peers_per_sandbox = k.get<int>();
}

// Where the readers of a profile's keys report a problem: pointer, message.
using ProfileErrors = std::function<void(const std::string&, std::string)>;

// name and backend.
void read_identity(const nlohmann::json& v, DeploymentProfile& p, const ProfileErrors& err) {
  if (v.contains("name")) {
    if (v["name"].is_string()) {
      p.name = v["name"].get<std::string>();
    } else {
      err("/name", "name must be a string");
    }
  }
  if (v.contains("backend")) {
    if (v["backend"].is_string()) {
      const auto& name = v["backend"].get_ref<const std::string&>();
      p.backend = backend_from_name(name);
      if (p.backend == BackendKind::existing) p.backend.reset();  // no profile deploys nothing
      if (!p.backend) err("/backend", "backend must be local or hawk, not '" + name + "'");
    } else {
      err("/backend", "backend must be a string (local, hawk)");
    }
  }
}

// node_mounts: a list of absolute mount points, no "." or ".." segment. Absent: what the
// backend's own sandboxes show (DeploymentProfile::node_mounts).
void read_node_mounts(const nlohmann::json& v, DeploymentProfile& p, const ProfileErrors& err) {
  if (!v.contains("node_mounts")) {
    if (!p.backend || p.backend == BackendKind::local) p.node_mounts = {"/usr", "/etc/alternatives"};
    return;
  }
  const auto& m = v["node_mounts"];
  if (!m.is_array()) {
    err("/node_mounts", "node_mounts must be a list of absolute mount points, e.g. [/usr]");
    return;
  }
  for (std::size_t i = 0; i < m.size(); ++i) {
    const std::string where = "/node_mounts/" + std::to_string(i);
    const std::string path = m[i].is_string() ? m[i].get<std::string>() : std::string();
    const bool dotted = path.find("/./") != std::string::npos || path.find("/../") != std::string::npos ||
                        path.ends_with("/.") || path.ends_with("/..");
    if (!path.starts_with("/") || dotted || path.size() > 4096) {
      err(where, "node_mounts entries must be absolute mount points without . or .. segments, got " +
                     brief_json(m[i]));
      continue;
    }
    p.node_mounts.push_back(path);
  }
}

// runtime_classes, then sandbox_runtime_class, which must be one of them (or becomes the
// only one when the list is absent), and sandbox_runtime_class_is_default.
void read_runtime_classes(const nlohmann::json& v, DeploymentProfile& p, const ProfileErrors& err) {
  if (v.contains("runtime_classes")) {
    const auto& rc = v["runtime_classes"];
    if (!rc.is_array()) {
      err("/runtime_classes", "runtime_classes must be a list of runtime class names, e.g. [gvisor]");
    } else {
      for (std::size_t i = 0; i < rc.size(); ++i) {
        if (!rc[i].is_string() || !valid_class_name(rc[i].get<std::string>())) {
          err(pointer_join("/runtime_classes", i),
              "not a runtime class name: " + brief_json(rc[i]) + " (lowercase letters, digits, '-' and '.')");
        } else {
          p.runtime_classes.push_back(rc[i].get<std::string>());
        }
      }
    }
  }
  if (v.contains("sandbox_runtime_class") && !v["sandbox_runtime_class"].is_null()) {
    const auto& s = v["sandbox_runtime_class"];
    if (!s.is_string() || !valid_class_name(s.get<std::string>())) {
      err("/sandbox_runtime_class", "sandbox_runtime_class must be a runtime class name, e.g. gvisor");
    } else {
      p.sandbox_runtime_class = s.get<std::string>();
      if (!v.contains("runtime_classes")) {
        p.runtime_classes.push_back(*p.sandbox_runtime_class);
      } else if (!p.offers(*p.sandbox_runtime_class)) {
        err("/sandbox_runtime_class",
            "sandbox_runtime_class '" + *p.sandbox_runtime_class +
                "' is not in runtime_classes; add it there or name an offered class");
      }
    }
  }
  if (v.contains("sandbox_runtime_class_is_default")) {
    if (v["sandbox_runtime_class_is_default"].is_boolean()) {
      p.sandbox_runtime_class_is_default = v["sandbox_runtime_class_is_default"].get<bool>();
    } else {
      err("/sandbox_runtime_class_is_default", "sandbox_runtime_class_is_default must be true or false");
    }
  }
}

// runtime_handlers (class -> OCI runtime) and the names of node_classes.
void read_handlers_and_node_classes(const nlohmann::json& v, DeploymentProfile& p, const ProfileErrors& err) {
  if (v.contains("runtime_handlers")) {
    const auto& h = v["runtime_handlers"];
    if (!h.is_object()) {
      err("/runtime_handlers",
          "runtime_handlers must map runtime class -> OCI runtime, e.g. {gvisor: runsc}");
    } else {
      for (const auto& [cls, handler] : h.items()) {
        if (!handler.is_string() || handler.get<std::string>().empty()) {
          err(pointer_join("/runtime_handlers", cls), "the handler of '" + cls + "' must be a program name");
        } else {
          p.runtime_handlers.emplace_back(cls, handler.get<std::string>());
        }
      }
    }
  }
  if (!v.contains("node_classes")) return;
  const auto& n = v["node_classes"];
  if (!n.is_object()) {
    err("/node_classes", "node_classes must map a node class name to its settings");
    return;
  }
  for (const auto& [name, settings] : n.items()) {
    if (!settings.is_object() && !settings.is_null()) {
      err(pointer_join("/node_classes", name), "node class '" + name + "' must be a mapping");
    }
    p.node_classes.push_back(name);
  }
}

DeploymentProfile from_document(const YamlDocument& doc, const std::string& path) {
  const nlohmann::json& v = doc.value;
  std::vector<Diagnostic> errors;
  auto err = [&](const std::string& pointer, std::string message) {
    errors.push_back(doc.source.diagnostic(pointer, "", std::move(message)));
  };
  DeploymentProfile p;
  p.path = path;
  if (!v.is_object()) {
    throw UserError({doc.source.diagnostic("", "", "a deployment profile must be a mapping of keys")});
  }
  p.raw = v;
  read_identity(v, p, err);
  read_runtime_classes(v, p, err);
  read_handlers_and_node_classes(v, p, err);
  read_egress_deadline(v, p, err);
  read_blocked_deadline(v, p, err);
  read_peers_per_sandbox(v, p, err);
  read_node_mounts(v, p, err);
  if (p.backend == BackendKind::hawk || v.contains("hawk")) detail::read_hawk_section(doc, p, errors);
  detail::read_egress_section(doc, p, errors);
  detail::read_witness_section(doc, p, errors);
  detail::read_node_view_section(doc, p, errors);
  detail::read_hubble_section(doc, p, errors);
  detail::read_kubernetes_api_section(doc, p, errors);
  detail::read_node_image_section(doc, p, errors);
  detail::read_accepted_escapes(doc, p, errors);
  detail::read_accepted_risks(doc, p, errors);
  detail::read_node_class_settings(doc, p, errors);
  if (p.name.empty()) {
    std::string stem =
        path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
    p.name = stem.substr(0, stem.find('.'));
  }
  if (!errors.empty()) throw UserError(std::move(errors));
  return p;
}

}  // namespace

const std::vector<std::string>& accepted_risk_checks() {
  static const std::vector<std::string> checks = {"peers:tcp-2222", "peers:serve-port"};
  return checks;
}

DeploymentProfile parse_deployment(std::string_view yaml_text, const std::string& path) {
  return from_document(parse_yaml(yaml_text, path), path);
}

DeploymentProfile load_deployment(const std::string& path) {
  return from_document(load_yaml_file(path), path);
}

}  // namespace isoharness::scenario
