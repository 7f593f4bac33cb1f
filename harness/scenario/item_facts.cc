// Harness facts about an item's sandbox (the `sandbox_defaults` and `sandboxes[]` entries of
// a scenario): parsing and validation of one facts mapping on top of a base.
#include "harness/scenario/item_facts.h"

#include <regex>
#include <set>

namespace isoharness::scenario {

namespace {

std::optional<bool> parse_image_user(const nlohmann::json& v) {
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (s == "root") return true;
    if (s == "non-root" || s == "nonroot") return false;
  }
  if (v.is_number_integer()) return v.get<std::int64_t>() == 0;
  return std::nullopt;
}

ServiceFacts* find_service(ItemFacts& f, const std::string& name) {
  for (auto& s : f.services) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace

ItemFacts default_item_facts() {
  ItemFacts f;
  f.services.push_back(ServiceFacts{"default", std::nullopt, false, std::nullopt, std::nullopt});
  return f;
}

namespace {

// Where a facts mapping reports its problems.
struct FactsErrors {
  const SourceMap& source;
  std::vector<Diagnostic>& errors;
  void operator()(const std::string& pointer, std::string message) const {
    errors.push_back(source.diagnostic(pointer, "", std::move(message)));
  }
};

bool is_network_mode(const nlohmann::json& v) {
  return v.is_string() && (v == "none" || v == "bridge");
}

void check_fact_keys(const nlohmann::json& v, const std::string& pointer, const FactsErrors& err,
                     const std::set<std::string>& extra_keys) {
  static const std::set<std::string> known = {"services",     "image",         "image_user", "gpu",
                                              "network_mode", "runtime_class", "workdir",    "provider_tools",
                                              "compose",      "values",        "sandbox"};
  for (const auto& [key, value] : v.items()) {
    if (!known.count(key) && !extra_keys.count(key)) {
      err(pointer_join(pointer, key),
          "unknown sandbox fact '" + key +
              "' (known: services, image, image_user, gpu, network_mode, "
              "runtime_class, workdir, provider_tools, compose, values, sandbox)");
    }
  }
}

// One key of a `services.<name>` mapping.
void apply_service_fact(const std::string& key, const nlohmann::json& value, const std::string& kp,
                        const FactsErrors& err, ServiceFacts& s) {
  if (key == "image") {
    if (value.is_string() && !value.get<std::string>().empty()) {
      s.image = value.get<std::string>();
    } else {
      err(kp, "image must be an image reference string");
    }
  } else if (key == "gpu") {
    if (value.is_boolean()) {
      s.gpu = value.get<bool>();
    } else {
      err(kp, "gpu must be true or false");
    }
  } else if (key == "image_user") {
    auto root = parse_image_user(value);
    if (root) {
      s.image_user_root = root;
    } else {
      err(kp, "image_user must be root, non-root or a uid");
    }
  } else if (key == "network_mode") {
    if (is_network_mode(value)) {
      s.network_mode = value.get<std::string>();
    } else {
      err(kp, "network_mode must be none or bridge");
    }
  } else {
    err(kp, "unknown service fact '" + key + "' (known: image, gpu, image_user, network_mode)");
  }
}

// The whole-service list, merged per service name on top of the base (sandbox_defaults).
void apply_services(const nlohmann::json& services, const std::string& sp, const FactsErrors& err,
                    ItemFacts& f) {
  if (!services.is_object() || services.empty()) {
    err(sp, "services must map a service name to its facts, e.g. {default: {gpu: false}}");
    return;
  }
  ItemFacts fresh;
  fresh.services = f.services.empty() ? default_item_facts().services : f.services;
  for (const auto& [name, sv] : services.items()) {
    const std::string p = pointer_join(sp, name);
    static const std::regex name_re("[a-z0-9]([-a-z0-9_]*[a-z0-9])?");
    if (!std::regex_match(name, name_re) || name.size() > 63) {
      err(p, "service name '" + name + "' must be lowercase letters, digits, '-' or '_'");
      continue;
    }
    ServiceFacts* s = find_service(fresh, name);
    if (!s) {
      fresh.services.push_back(ServiceFacts{name, std::nullopt, false, std::nullopt, std::nullopt});
      s = &fresh.services.back();
    }
    if (sv.is_null()) continue;
    if (!sv.is_object()) {
      err(p, "service '" + name + "' must be a mapping (image, gpu, image_user, network_mode)");
      continue;
    }
    for (const auto& [key, value] : sv.items()) apply_service_fact(key, value, pointer_join(p, key), err, *s);
  }
  f.services = std::move(fresh.services);
}

// The shorthands for the default service (image, gpu, network_mode) and image_user, which
// is item-wide: it applies to every service that does not declare its own.
void apply_service_shorthands(const nlohmann::json& v, const std::string& pointer, const FactsErrors& err,
                              ItemFacts& f) {
  ServiceFacts& def = f.services[0];
  if (v.contains("image")) {
    if (v["image"].is_string()) {
      def.image = v["image"].get<std::string>();
    } else {
      err(pointer_join(pointer, "image"), "image must be an image reference string");
    }
  }
  if (v.contains("gpu")) {
    if (v["gpu"].is_boolean()) {
      def.gpu = v["gpu"].get<bool>();
    } else {
      err(pointer_join(pointer, "gpu"), "gpu must be true or false");
    }
  }
  if (v.contains("network_mode")) {
    if (is_network_mode(v["network_mode"])) {
      def.network_mode = v["network_mode"].get<std::string>();
    } else {
      err(pointer_join(pointer, "network_mode"), "network_mode must be none or bridge");
    }
  }
  if (!v.contains("image_user")) return;
  auto root = parse_image_user(v["image_user"]);
  if (!root) {
    err(pointer_join(pointer, "image_user"), "image_user must be root, non-root or a uid");
    return;
  }
  const nlohmann::json* services = v.contains("services") ? &v["services"] : nullptr;
  for (auto& s : f.services) {
    bool own = services && services->is_object() && services->contains(s.name) &&
               (*services)[s.name].is_object() && (*services)[s.name].contains("image_user");
    if (!own) s.image_user_root = root;
  }
}

// The facts of the item as a whole: runtime_class, workdir, provider_tools.
void apply_item_wide_facts(const nlohmann::json& v, const std::string& pointer, const FactsErrors& err,
                           ItemFacts& f) {
  if (v.contains("runtime_class")) {
    const auto& rc = v["runtime_class"];
    static const std::regex re("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");
    if (rc.is_null()) {
      f.runtime_class.reset();
    } else if (rc.is_string() && std::regex_match(rc.get<std::string>(), re)) {
      f.runtime_class = rc.get<std::string>();
    } else {
      err(pointer_join(pointer, "runtime_class"), "runtime_class must be a runtime class name, e.g. gvisor");
    }
  }
  if (v.contains("workdir")) {
    const auto& w = v["workdir"];
    if (w.is_string() && !w.get<std::string>().empty() && w.get<std::string>()[0] == '/' &&
        w.get<std::string>().find("..") == std::string::npos) {
      f.workdir = w.get<std::string>();
    } else {
      err(pointer_join(pointer, "workdir"), "workdir must be an absolute path without '..'");
    }
  }
  if (!v.contains("provider_tools")) return;
  const auto& t = v["provider_tools"];
  if (!t.is_array()) {
    err(pointer_join(pointer, "provider_tools"), "provider_tools must be a list, e.g. [web_search]");
    return;
  }
  f.provider_tools.clear();
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].is_string() && !t[i].get<std::string>().empty()) {
      f.provider_tools.push_back(t[i].get<std::string>());
    } else {
      err(pointer_join(pointer_join(pointer, "provider_tools"), i),
          "a provider tool is a name, e.g. web_search");
    }
  }
}

// image_user beside a sandbox file: it fills in the services whose file states no user, and
// may not contradict one that does.
void apply_file_image_user(const nlohmann::json& v, const std::string& pointer, const FactsErrors& err,
                           ItemFacts& f) {
  if (!v.contains("image_user")) return;
  auto root = parse_image_user(v["image_user"]);
  if (!root) {
    err(pointer_join(pointer, "image_user"), "image_user must be root, non-root or a uid");
    return;
  }
  for (auto& s : f.services) {
    if (!s.image_user_root) {
      s.image_user_root = root;
    } else if (*s.image_user_root != *root) {
      err(pointer_join(pointer, "image_user"), "image_user contradicts service '" + s.name + "' of " +
                                                   f.sandbox_file + ", whose user: makes it " +
                                                   (*s.image_user_root ? "root" : "non-root"));
    }
  }
}

// sandbox: the sandbox type the task declares (local: the runner's own pod, no sandbox).
void apply_sandbox_type(const nlohmann::json& v, const std::string& pointer, const SourceMap& source,
                        const FactsErrors& err, ItemFacts& f) {
  if (!v.contains("sandbox")) return;
  const std::string p = pointer_join(pointer, "sandbox");
  const auto& t = v["sandbox"];
  if (!t.is_string() || (t != "local" && t != "k8s" && t != "docker")) {
    err(p, "sandbox must be local, k8s or docker (the sandbox type the task declares)");
    return;
  }
  f.local_sandbox.reset();
  if (t == "local") f.local_sandbox = std::make_shared<const Diagnostic>(source.diagnostic(p, "", ""));
  if (f.local_sandbox && (v.contains("compose") || v.contains("values")))
    err(p, "a local sandbox has no sandbox file: give sandbox: local or compose:/values:, not both");
}

}  // namespace

void apply_facts(const nlohmann::json& v, const std::string& pointer, const SourceMap& source, ItemFacts& f,
                 std::vector<Diagnostic>& errors, const std::set<std::string>& extra_keys) {
  const FactsErrors err{source, errors};
  if (!v.is_object()) {
    err(pointer, "sandbox facts must be a mapping (services, image_user, gpu, runtime_class, ...)");
    return;
  }
  check_fact_keys(v, pointer, err, extra_keys);
  apply_sandbox_type(v, pointer, source, err, f);
  const bool own_file = apply_sandbox_file(v, pointer, source, f, errors);
  if (own_file && !v.contains("sandbox")) f.local_sandbox.reset();  // a file is a sandbox, not local
  if (own_file || !f.sandbox_file.empty()) {
    // The task's own file decides the sandbox; image_user and provider_tools add to it.
    apply_file_image_user(v, pointer, err, f);
    if (v.contains("provider_tools"))
      apply_item_wide_facts({{"provider_tools", v["provider_tools"]}}, pointer, err, f);
    return;
  }
  // Whole-service list first, then the shorthands for the default service on top.
  if (v.contains("services")) apply_services(v["services"], pointer_join(pointer, "services"), err, f);
  if (f.services.empty()) f.services = default_item_facts().services;
  apply_service_shorthands(v, pointer, err, f);
  apply_item_wide_facts(v, pointer, err, f);
}

}  // namespace isoharness::scenario
