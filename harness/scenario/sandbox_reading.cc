// What the compose converter and the chart values reader share.
#include "harness/scenario/sandbox_reading.h"

#include <algorithm>
#include <regex>

namespace isoharness::scenario {

bool chart_service_name_ok(std::string_view name) {
  static const std::regex pattern("[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?");
  return name.size() <= 63 && std::regex_match(name.begin(), name.end(), pattern);
}

std::vector<std::string> keys_in_file_order(const nlohmann::json& mapping, const std::string& pointer,
                                            const SourceMap& source) {
  std::vector<std::pair<Mark, std::string>> keyed;
  for (const auto& [key, value] : mapping.items())
    keyed.push_back({source.find(pointer_join(pointer, key)), key});
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    return std::pair(a.first.line, a.first.column) < std::pair(b.first.line, b.first.column);
  });
  std::vector<std::string> keys;
  keys.reserve(keyed.size());
  for (auto& [mark, key] : keyed) keys.push_back(std::move(key));
  return keys;
}

bool read_string_list(const nlohmann::json& v, const std::string& pointer, const SandboxProblems& problems,
                      std::vector<std::string>& out) {
  if (!v.is_array()) {
    problems(pointer, "must be a list of strings");
    return false;
  }
  bool ok = true;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i].is_string() && !v[i].get<std::string>().empty()) {
      out.push_back(v[i].get<std::string>());
    } else {
      problems(pointer_join(pointer, i), "must be a non-empty string");
      ok = false;
    }
  }
  return ok;
}

namespace {

bool positive_gpu_count(const nlohmann::json& resources, const char* section) {
  if (!resources.is_object() || !resources.contains(section) || !resources[section].is_object()) return false;
  const auto& s = resources[section];
  if (!s.contains("nvidia.com/gpu")) return false;
  const auto& n = s["nvidia.com/gpu"];
  if (n.is_number()) return n.get<double>() > 0;
  return n.is_string() && !n.get<std::string>().empty() && n.get<std::string>() != "0";
}

}  // namespace

ServiceFacts service_from_chart(std::string name, nlohmann::json chart) {
  ServiceFacts s;
  s.name = std::move(name);
  if (chart.contains("image") && chart["image"].is_string()) s.image = chart["image"].get<std::string>();
  if (chart.contains("resources"))
    s.gpu = positive_gpu_count(chart["resources"], "limits") ||
            positive_gpu_count(chart["resources"], "requests");
  if (chart.contains("securityContext") && chart["securityContext"].is_object()) {
    const auto& sc = chart["securityContext"];
    if (sc.contains("runAsUser") && sc["runAsUser"].is_number_integer())
      s.image_user_root = sc["runAsUser"].get<std::int64_t>() == 0;
  }
  if (chart.value("networkIsolated", false)) s.network_mode = "none";
  s.chart = std::move(chart);
  return s;
}

ServiceFacts chart_default_service() {
  ServiceFacts s = service_from_chart(
      "default", nlohmann::json{{"image", kChartDefaultImage}, {"command", {"tail", "-f", "/dev/null"}}});
  s.from_chart_values = true;
  return s;
}

void finish_definition(SandboxDefinition& d, const std::vector<std::string>& pointers,
                       const SandboxProblems& problems) {
  std::vector<std::pair<ServiceFacts, std::string>> order;
  for (std::size_t i = 0; i < d.services.size(); ++i)
    order.push_back({std::move(d.services[i]), pointers[i]});
  // Helm merges the file over the chart's own values.yaml, whose services hold a default
  // service: a file that names none still gets that one, and the agent runs in it.
  const bool has_default =
      std::any_of(order.begin(), order.end(), [](const auto& s) { return s.first.name == "default"; });
  if (!has_default && !order.empty()) order.insert(order.begin(), {chart_default_service(), std::string()});
  std::stable_partition(order.begin(), order.end(), [](const auto& s) { return s.first.name == "default"; });
  d.services.clear();
  for (auto& [svc, pointer] : order) {
    if (svc.chart.contains("runtimeClassName") && svc.chart["runtimeClassName"].is_string()) {
      const std::string rc = svc.chart["runtimeClassName"].get<std::string>();
      // CLUSTER_DEFAULT is the chart's word for "no runtimeClassName": nothing pinned.
      static const std::regex class_name("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");
      if (rc != "CLUSTER_DEFAULT" && !std::regex_match(rc, class_name)) {
        problems(pointer, "service '" + svc.name + "': runtime class '" + rc +
                              "' is not a runtime class name (lowercase letters, digits, '-', '.')");
      } else if (rc != "CLUSTER_DEFAULT") {
        if (d.runtime_class && *d.runtime_class != rc) {
          problems(pointer, "service '" + svc.name + "' pins runtime class '" + rc +
                                "' but another service pins '" + *d.runtime_class +
                                "'; isoharness verifies one runtime class per item: pin the same class "
                                "on every service, or none");
        }
        if (!d.runtime_class) d.runtime_class = rc;
      }
    }
    if (svc.name == "default" && svc.chart.contains("workingDir") && svc.chart["workingDir"].is_string())
      d.workdir = svc.chart["workingDir"].get<std::string>();
    d.services.push_back(std::move(svc));
  }
}

SandboxReading read_sandbox_document(std::string_view text, const std::string& file,
                                     const SandboxDocumentReader& read) {
  SandboxReading out;
  try {
    YamlDocument doc = parse_yaml(text, file);
    read(doc.value, SandboxProblems{doc.source, out.errors}, out.definition);
  } catch (const UserError& e) {
    out.errors.insert(out.errors.end(), e.diagnostics().begin(), e.diagnostics().end());
  }
  sort_by_place(out.errors);
  return out;
}

void sort_by_place(std::vector<Diagnostic>& errors) {
  std::stable_sort(errors.begin(), errors.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.file, a.line, a.column) < std::tie(b.file, b.line, b.column);
  });
}

}  // namespace isoharness::scenario
