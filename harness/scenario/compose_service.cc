// One compose service -> one chart service, key by key, as the sandbox package converts
// it (docs/CONTRACTS.md "Task sandbox files"). Every key is either converted, ignored
// because the package ignores it, or refused by name at its line.
#include "harness/scenario/compose_service.h"

#include <algorithm>
#include <functional>
#include <map>

namespace isoharness::scenario {

namespace {

struct ServiceConversion {
  const std::string& name;
  std::string item;  // "service 'x'"
  const ComposeServiceContext& context;
  nlohmann::json chart = nlohmann::json::object();
  std::optional<std::string> network_mode;
  void bad(const std::string& pointer, std::string message) const {
    context.problems(pointer, std::move(message), item);
  }
};

using KeyConverter = std::function<void(const nlohmann::json&, const std::string&, ServiceConversion&)>;

// entrypoint / command: a string is split on whitespace, a list is kept.
std::optional<nlohmann::json> argv_of(const nlohmann::json& v) {
  if (v.is_string()) {
    nlohmann::json out = nlohmann::json::array();
    std::string word;
    for (char c : v.get<std::string>() + " ") {
      if (c == ' ' || c == '\t' || c == '\n') {
        if (!word.empty()) out.push_back(word);
        word.clear();
      } else {
        word += c;
      }
    }
    return out;
  }
  if (v.is_array() && std::all_of(v.begin(), v.end(), [](const auto& x) { return x.is_string(); })) return v;
  return std::nullopt;
}

void take_string(const nlohmann::json& v, const std::string& p, ServiceConversion& c, const char* chart_key) {
  if (v.is_string() && !v.get<std::string>().empty())
    c.chart[chart_key] = v;
  else
    c.bad(p, std::string("must be a non-empty string"));
}

void take_argv(const nlohmann::json& v, const std::string& p, ServiceConversion& c, const char* chart_key) {
  if (auto argv = argv_of(v))
    c.chart[chart_key] = *argv;
  else
    c.bad(p, "must be a command line or a list of strings");
}

void convert_environment(const nlohmann::json& v, const std::string& p, ServiceConversion& c) {
  nlohmann::json env = nlohmann::json::array();
  if (v.is_object()) {
    for (const auto& key : keys_in_file_order(v, p, c.context.problems.source)) {
      const auto& value = v[key];
      if (value.is_string() || value.is_number() || value.is_boolean())
        env.push_back({{"name", key}, {"value", value}});
      else
        c.bad(pointer_join(p, key),
              "environment variable '" + key +
                  "' has no value (a value from the host is not passed into a sandbox)");
    }
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string s = v[i].is_string() ? v[i].get<std::string>() : "";
      const auto eq = s.find('=');
      if (eq == std::string::npos || eq == 0)
        c.bad(pointer_join(p, i), "environment entries are NAME=value");
      else
        env.push_back({{"name", s.substr(0, eq)}, {"value", s.substr(eq + 1)}});
    }
  } else {
    c.bad(p, "environment must be a mapping or a list of NAME=value");
  }
  c.chart["env"] = std::move(env);
}

void convert_volumes(const nlohmann::json& v, const std::string& p, ServiceConversion& c) {
  if (!v.is_array()) {
    c.bad(p, "volumes must be a list of NAME:/path");
    return;
  }
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string s = v[i].is_string() ? v[i].get<std::string>() : "";
    const auto colon = s.find(':');
    const std::string name = s.substr(0, colon);
    if (colon == std::string::npos || colon == 0 || s.size() == colon + 1 || s[colon + 1] != '/') {
      c.bad(pointer_join(p, i), "a service volume is NAME:/path (the short syntax, a named volume)");
    } else if (!c.context.declared_volumes.count(name)) {
      c.bad(pointer_join(p, i), "'" + name +
                                    "' is not a named volume of the file's top-level volumes (a host path "
                                    "cannot be mounted into a sandbox)");
    } else {
      out.push_back(chart_volume_name(name) + s.substr(colon));
    }
  }
  c.chart["volumes"] = std::move(out);
}

void convert_user(const nlohmann::json& v, const std::string& p, ServiceConversion& c) {
  std::string text = v.is_number_integer() ? std::to_string(v.get<std::int64_t>())
                     : v.is_string()       ? v.get<std::string>()
                                           : "";
  const auto colon = text.find(':');
  auto id = [](const std::string& s) -> std::optional<std::int64_t> {
    if (s.empty() || s.size() > 10 || !std::all_of(s.begin(), s.end(), ::isdigit)) return std::nullopt;
    return std::stoll(s);
  };
  auto uid = id(text.substr(0, colon));
  auto gid = colon == std::string::npos ? std::optional<std::int64_t>(-1) : id(text.substr(colon + 1));
  if (!uid || !gid) {
    c.bad(p, "user must be a numeric uid or uid:gid (the chart's runAsUser / runAsGroup)");
    return;
  }
  c.chart["securityContext"]["runAsUser"] = *uid;
  if (*gid >= 0) c.chart["securityContext"]["runAsGroup"] = *gid;
}

void convert_network_mode(const nlohmann::json& v, const std::string& p, ServiceConversion& c) {
  if (v == "none") {
    c.chart["networkIsolated"] = true;
    c.network_mode = "none";
  } else if (v == "bridge") {
    c.network_mode = "bridge";  // Docker's default; the platform opens every domain for it
  } else {
    c.bad(p, "network_mode must be none or bridge");
  }
}

void convert_hostname(const nlohmann::json& v, const std::string& p, ServiceConversion& c) {
  if (v != c.name) c.bad(p, "hostname may only be the service's own name ('" + c.name + "')");
}

// The per-service x-inspect_k8s_sandbox: {resources: {requests, limits}}, merged into the
// resources the shortcuts made; a resource set twice is refused.
void convert_service_extension(const nlohmann::json& v, const std::string& p, ServiceConversion& c) {
  if (!v.is_object()) {
    c.bad(p, "must be a mapping {resources}");
    return;
  }
  for (const auto& [key, value] : v.items()) {
    const std::string kp = pointer_join(p, key);
    if (key != "resources") {
      c.bad(kp, "unsupported key '" + key + "' in a service's x-inspect_k8s_sandbox (known: resources)");
      continue;
    }
    if (!value.is_object()) {
      c.bad(kp, "resources must be a mapping {requests, limits}");
      continue;
    }
    for (const auto& [section, entries] : value.items()) {
      const std::string sp = pointer_join(kp, section);
      if ((section != "requests" && section != "limits") || !entries.is_object()) {
        c.bad(sp, "x-inspect_k8s_sandbox.resources takes requests and limits, each a mapping");
        continue;
      }
      nlohmann::json& target = c.chart["resources"][section];
      for (const auto& [rk, rv] : entries.items()) {
        if (target.contains(rk))
          c.bad(pointer_join(sp, rk), "'" + section + "." + rk + "' is already set to " +
                                          brief_json(target[rk]) + " by mem_limit / cpus / deploy");
        else
          target[rk] = rv;
      }
    }
  }
}

void ignored(const nlohmann::json&, const std::string&, ServiceConversion&) {}

const std::map<std::string, KeyConverter>& key_converters() {
  static const std::map<std::string, KeyConverter> table = {
      {"image", [](auto& v, auto& p, auto& c) { take_string(v, p, c, "image"); }},
      {"runtime", [](auto& v, auto& p, auto& c) { take_string(v, p, c, "runtimeClassName"); }},
      {"entrypoint", [](auto& v, auto& p, auto& c) { take_argv(v, p, c, "command"); }},
      {"command", [](auto& v, auto& p, auto& c) { take_argv(v, p, c, "args"); }},
      {"working_dir",
       [](auto& v, auto& p, auto& c) {
         if (v.is_string() && v.template get<std::string>().starts_with("/"))
           c.chart["workingDir"] = v;
         else
           c.bad(p, "working_dir must be an absolute path");
       }},
      {"environment", convert_environment},
      {"volumes", convert_volumes},
      {"healthcheck",
       [](auto& v, auto& p, auto& c) {
         c.chart["readinessProbe"] = convert_compose_healthcheck(v, p, c.item, c.context.problems);
       }},
      {"user", convert_user},
      {"network_mode", convert_network_mode},
      {"hostname", convert_hostname},
      {"x-inspect_k8s_sandbox", convert_service_extension},
      {"x-k8s", convert_service_extension},
      // Read with the resources (deploy wins over the shortcuts).
      {"deploy", ignored},
      {"mem_limit", ignored},
      {"cpus", ignored},
      // What the package itself ignores: documentation (expose), Docker-only knobs (init,
      // memswap_limit, healthcheck.start_interval), local builds (build, x-local: images
      // come from a registry), and x-default (it chose the default service).
      {"expose", ignored},
      {"init", ignored},
      {"memswap_limit", ignored},
      {"build", ignored},
      {"x-local", ignored},
      {"x-default", ignored},
  };
  return table;
}

std::string unsupported_hint(const std::string& key) {
  if (key == "networks")
    return " (per-network segmentation is not verified by isoharness; leave networks out)";
  if (key == "security_opt") return " (isolation sets the security context; leave security_opt out)";
  if (key == "ports") return " (every port is open between services in the chart)";
  if (key == "devices")
    return " (the sandbox package refuses it; ask for a GPU with the service's x-inspect_k8s_sandbox: "
           "{resources: {limits: {nvidia.com/gpu: N}}})";
  if (key == "privileged" || key == "cap_add")
    return " (a sandbox never gets more privilege than its isolation gives)";
  return "";
}

}  // namespace

std::string chart_volume_name(std::string_view compose_name) {
  std::string out;
  for (char c : compose_name)
    out += (c == '_' || c == '.') ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

ServiceFacts convert_compose_service(const std::string& name, const std::string& output_name,
                                     const nlohmann::json& service, const std::string& pointer,
                                     const ComposeServiceContext& context) {
  ServiceConversion c{name, "service '" + name + "'", context};
  if (!chart_service_name_ok(name))
    c.bad(pointer, "service name '" + name +
                       "' is not a name the chart takes (lowercase letters, digits and '-', at most 63, "
                       "starting and ending with a letter or digit)");
  if (!service.is_object()) {
    c.bad(pointer, "a service must be a mapping with at least image");
    return service_from_chart(output_name, nlohmann::json::object());
  }
  // Resources first: the service's x-inspect_k8s_sandbox merges into them.
  convert_compose_resources(service, pointer, c.item, context.problems, c.chart);
  if (service.contains("x-inspect_k8s_sandbox") && service.contains("x-k8s"))
    c.bad(pointer_join(pointer, "x-k8s"), "give x-inspect_k8s_sandbox or its alias x-k8s, not both");
  const auto& table = key_converters();
  for (const auto& key : keys_in_file_order(service, pointer, context.problems.source)) {
    const std::string kp = pointer_join(pointer, key);
    auto it = table.find(key);
    if (it == table.end())
      c.bad(kp, "unsupported compose key '" + key + "'" + unsupported_hint(key));
    else
      it->second(service[key], kp, c);
  }
  // The chart's own default service has an image, which Helm merges under the file's.
  if (!service.contains("image") && output_name != "default")
    c.bad(pointer, "a service needs an image (the chart pulls it from a registry)");
  // Every service gets a DNS record, as under Docker Compose.
  c.chart["dnsRecord"] = true;
  ServiceFacts facts = service_from_chart(output_name, std::move(c.chart));
  if (c.network_mode) facts.network_mode = c.network_mode;
  return facts;
}

}  // namespace isoharness::scenario
