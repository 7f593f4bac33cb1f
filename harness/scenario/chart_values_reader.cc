// A values file of the agent-env chart, held against the chart's own schema
// (values.schema.json): every service key and type the schema allows, the service name
// pattern, image required (the default service comes from the chart when the file has none). Keys the schema
// allows but isoharness cannot carry or verify (service accounts, extra resources, per-network segmentation,
// CoreDNS) are refused by name as well: a sandbox is verified as it is, or not at all.
#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>

#include "harness/scenario/sandbox_definition.h"
#include "harness/scenario/sandbox_reading.h"

namespace isoharness::scenario {

namespace {

enum class ChartType { string, string_or_null, boolean, array, object, string_array, ports, init_containers };

const std::map<std::string, ChartType>& chart_service_keys() {
  static const std::map<std::string, ChartType> keys = {
      {"runtimeClassName", ChartType::string},
      {"image", ChartType::string},
      {"imagePullPolicy", ChartType::string_or_null},
      {"additionalDnsRecords", ChartType::string_array},
      {"ports", ChartType::ports},
      {"dnsRecord", ChartType::boolean},
      {"command", ChartType::array},
      {"args", ChartType::array},
      {"workingDir", ChartType::string_or_null},
      {"readinessProbe", ChartType::object},
      {"livenessProbe", ChartType::object},
      {"env", ChartType::array},
      {"resources", ChartType::object},
      {"securityContext", ChartType::object},
      {"volumeMounts", ChartType::array},
      {"volumes", ChartType::array},
      {"tolerations", ChartType::array},
      {"nodeSelector", ChartType::object},
      {"networkIsolated", ChartType::boolean},
      {"initContainers", ChartType::init_containers},
  };
  return keys;
}

bool chart_type_ok(const nlohmann::json& v, ChartType t) {
  auto every = [&](auto pred) { return v.is_array() && std::all_of(v.begin(), v.end(), pred); };
  switch (t) {
    case ChartType::string:
      return v.is_string();
    case ChartType::string_or_null:
      return v.is_string() || v.is_null();
    case ChartType::boolean:
      return v.is_boolean();
    case ChartType::array:
      return v.is_array();
    case ChartType::object:
      return v.is_object();
    case ChartType::string_array:
      return every([](const auto& x) {
        static const std::regex re("[A-Za-z0-9_*][A-Za-z0-9_.*-]{0,252}");
        return x.is_string() && std::regex_match(x.template get<std::string>(), re);
      });
    case ChartType::ports:
      return every([](const auto& x) {
        return x.is_object() && x.contains("port") && x["port"].is_number_integer() &&
               x.contains("protocol") && x["protocol"].is_string();
      });
    case ChartType::init_containers:
      return every([](const auto& x) {
        return x.is_object() && x.contains("name") && x["name"].is_string() && x.contains("image") &&
               x["image"].is_string();
      });
  }
  return false;
}

const char* chart_type_name(ChartType t) {
  switch (t) {
    case ChartType::string:
      return "a string";
    case ChartType::string_or_null:
      return "a string or null";
    case ChartType::boolean:
      return "true or false";
    case ChartType::array:
      return "a list";
    case ChartType::object:
      return "a mapping";
    case ChartType::string_array:
      return "a list of DNS names";
    case ChartType::ports:
      return "a list of {protocol, port}";
    case ChartType::init_containers:
      return "a list of {name, image, ...}";
  }
  return "";
}

ServiceFacts read_chart_service(const std::string& name, const nlohmann::json& sv, const std::string& p,
                                const SandboxProblems& problems) {
  const std::string item = "service '" + name + "'";
  if (!chart_service_name_ok(name))
    problems(
        p,
        "service name '" + name + "' does not match the chart's pattern [a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?",
        item);
  if (!sv.is_object()) {
    problems(p, "a service must be a mapping with at least image", item);
    return service_from_chart(name, nlohmann::json::object());
  }
  nlohmann::json chart = nlohmann::json::object();
  for (const auto& [key, value] : sv.items()) {
    const std::string kp = pointer_join(p, key);
    auto it = chart_service_keys().find(key);
    if (key == "networks") {
      problems(
          kp,
          "'networks' is allowed by the chart, but per-network segmentation is not verified by isoharness; "
          "leave it out",
          item);
    } else if (it == chart_service_keys().end()) {
      problems(kp, "'" + key + "' is not a service key of the agent-env chart (its schema refuses it)", item);
    } else if (!chart_type_ok(value, it->second)) {
      problems(kp, "'" + key + "' must be " + chart_type_name(it->second) + " (the chart's schema)", item);
    } else {
      chart[key] = value;
    }
  }
  // The chart's own default service has an image, which Helm merges under the file's.
  if (name != "default" &&
      (!sv.contains("image") || !sv["image"].is_string() || sv["image"].get<std::string>().empty()))
    problems(p, "a service needs an image (the chart requires it)", item);
  return service_from_chart(name, std::move(chart));
}

void read_chart_volumes(const nlohmann::json& v, const SandboxProblems& problems, SandboxDefinition& d) {
  if (!v.is_object()) {
    problems("/volumes", "volumes must map a volume name to {} or {spec: ...}");
    return;
  }
  for (const auto& [name, value] : v.items()) {
    const bool ok =
        value.is_null() ||
        (value.is_object() && std::all_of(value.items().begin(), value.items().end(), [](const auto& kv) {
           return kv.key() == "spec" && kv.value().is_object();
         }));
    if (ok)
      d.volumes[name] = value.is_null() ? nlohmann::json::object() : value;
    else
      problems(pointer_join("/volumes", name),
               "volume '" + name + "' must be {} or {spec: {...}} (the chart's schema)");
  }
}

void read_chart_services(const nlohmann::json& services, const SandboxProblems& problems,
                         SandboxDefinition& d) {
  // No default service is fine: Helm merges the chart's own in (finish_definition).
  if (!services.is_object()) {
    problems("/services", "services must map service names to services");
    return;
  }
  std::vector<std::string> pointers;
  for (const auto& name : keys_in_file_order(services, "/services", problems.source)) {
    pointers.push_back(pointer_join("/services", name));
    d.services.push_back(read_chart_service(name, services[name], pointers.back(), problems));
    note_service_privileges(d.services.back().chart, pointers.back(), problems, d);
  }
  finish_definition(d, pointers, problems);
}

// additionalResources: Kubernetes objects the chart deploys with the sandbox as written
// (network policies among them); kept to be refused or flagged by the policy.
void read_additional_resources(const nlohmann::json& v, const std::string& p, const SandboxProblems& problems,
                               SandboxDefinition& d) {
  if (!v.is_array()) {
    problems(p, "additionalResources must be a list of objects or templated strings (the chart's schema)");
    return;
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::string kind = "a templated string";
    if (v[i].is_object()) kind = v[i].value("kind", std::string("an object"));
    note_brought(problems, pointer_join(p, i), BroughtKind::additional_resources, kind,
                 "additionalResources deploys " + kind + " with the sandbox", d);
    d.additional_resources.push_back(v[i]);
  }
}

// allowDomainsPorts: a list of {port 1..65535, protocol TCP/UDP/ANY (default ANY), domain
// (optional)}. The chart refuses TCP and ANY on 80 and 443 there (its own name-checked
// ports), and so does this reader.
void read_domain_ports(const nlohmann::json& v, const std::string& pointer, const SandboxProblems& problems,
                       nlohmann::json& out) {
  if (!v.is_array()) return problems(pointer, "must be a list of {port, protocol, domain}");
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = pointer_join(pointer, i);
    const auto& e = v[i];
    if (!e.is_object() || !e.contains("port") || !e["port"].is_number_integer() ||
        e["port"].get<long long>() < 1 || e["port"].get<long long>() > 65535) {
      problems(at, "must be {port: 1..65535, protocol: TCP/UDP/ANY, domain: name} (port required)");
      continue;
    }
    nlohmann::json entry = {{"port", e["port"].get<int>()}, {"protocol", "ANY"}};
    bool ok = true;
    for (const auto& [k, value] : e.items()) {
      if (k == "port") continue;
      if ((k != "protocol" && k != "domain") || !value.is_string() || value.get<std::string>().empty()) {
        problems(pointer_join(at, k), k == "protocol" || k == "domain"
                                          ? "must be a non-empty string"
                                          : "is not a key of an allowDomainsPorts entry");
        ok = false;
        continue;
      }
      std::string s = value.get<std::string>();
      if (k == "protocol") {
        for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        if (s != "TCP" && s != "UDP" && s != "ANY") {
          problems(pointer_join(at, k), "must be TCP, UDP or ANY");
          ok = false;
        }
      }
      entry[k] = s;
    }
    const int port = entry["port"].get<int>();
    if (ok && (port == 80 || port == 443) && entry["protocol"] != "UDP") {
      problems(at,
               "the chart refuses TCP (and ANY) on ports 80 and 443 in allowDomainsPorts: allowDomains opens "
               "them, name-checked");
      ok = false;
    }
    if (ok) out.push_back(std::move(entry));
  }
}

void read_values_document(const nlohmann::json& doc, const SandboxProblems& problems, SandboxDefinition& d) {
  static const std::set<std::string> schema_keys = {"global",
                                                    "allowDomains",
                                                    "allowDomainsPorts",
                                                    "allowEntities",
                                                    "allowCIDR",
                                                    "networks",
                                                    "corednsImage",
                                                    "corednsCommand",
                                                    "corednsSecurityContext",
                                                    "imagePullSecrets",
                                                    "services",
                                                    "volumes",
                                                    "additionalResources",
                                                    "annotations",
                                                    "labels",
                                                    "automountServiceAccountToken",
                                                    "serviceAccountCreate",
                                                    "serviceAccountName"};
  if (!doc.is_object() || !doc.contains("services")) {
    problems("", "a values file of the agent-env chart needs services: (this file has none)");
    return;
  }
  for (const auto& key : keys_in_file_order(doc, "", problems.source)) {
    const std::string p = pointer_join("", key);
    if (key == "services") {
      read_chart_services(doc[key], problems, d);
    } else if (key == "allowDomains") {
      read_string_list(doc[key], p, problems, d.allow_domains);
    } else if (key == "allowCIDR") {
      read_string_list(doc[key], p, problems, d.allow_cidr);
    } else if (key == "allowDomainsPorts") {
      read_domain_ports(doc[key], p, problems, d.allow_domains_ports);
    } else if (key == "allowEntities") {
      if (read_string_list(doc[key], p, problems, d.allow_entities)) note_entities(doc[key], p, problems, d);
    } else if (key == "additionalResources") {
      read_additional_resources(doc[key], p, problems, d);
    } else if (key == "volumes") {
      read_chart_volumes(doc[key], problems, d);
    } else if (schema_keys.count(key)) {
      problems(
          p, "'" + key + "' is allowed by the chart but isoharness cannot carry or verify it; leave it out");
    } else {
      problems(p, "'" + key + "' is not a key of the agent-env chart's values (its schema refuses it)");
    }
  }
}

}  // namespace

SandboxReading read_chart_values(std::string_view text, const std::string& file) {
  return read_sandbox_document(text, file, read_values_document);
}

}  // namespace isoharness::scenario
