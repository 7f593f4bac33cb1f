// The plan as JSON (schema isoharness.plan/v1) and the rendered values as YAML.
#include <yaml-cpp/yaml.h>

#include "harness/policy/plan.h"

namespace isoharness::policy {

namespace {

nlohmann::json optional_string(const std::optional<std::string>& s) {
  return s ? nlohmann::json(*s) : nlohmann::json(nullptr);
}

nlohmann::json diagnostic_json(const Diagnostic& d) {
  nlohmann::json j = {{"item", d.item}, {"message", d.message}, {"file", d.file}};
  j["line"] = d.line > 0 ? nlohmann::json(d.line) : nlohmann::json(nullptr);
  j["column"] = d.column > 0 ? nlohmann::json(d.column) : nlohmann::json(nullptr);
  j["text"] = d.to_string();
  return j;
}

nlohmann::json item_json(const PlanItem& item) {
  nlohmann::json j;
  j["id"] = item.id;
  j["task"] = item.task;
  j["item"] = item.item;
  j["package"] = item.package;
  j["task_index"] = item.task_index;
  j["item_index"] = item.item_index;
  j["args"] = item.args;
  j["sample_ids"] = item.sample_ids;
  j["description"] = item.description;
  j["source"] = {{"file", item.where.file}, {"line", item.where.line}};
  j["level"] = std::string(level_name(item.level));
  j["runtime_class"] = optional_string(item.runtime_class);
  j["runtime_class_source"] = std::string(runtime_class_source_name(item.runtime_class_source));
  j["gpu"] = item.gpu;
  j["isolation"] = {{"level", std::string(level_name(item.isolation.level))},
                    {"runtime_class", optional_string(item.isolation.runtime_class)},
                    {"allow_domains", item.isolation.allow_domains},
                    {"allow_cidr", item.isolation.allow_cidr},
                    {"non_root", item.isolation.non_root},
                    {"read_only_root", item.isolation.read_only_root}};
  j["values"] = item.values.get();
  j["expect"] = item.expect.get();
  j["egress"] = item.egress ? to_json(*item.egress) : nlohmann::json(nullptr);
  j["findings"] = nlohmann::json::array();
  for (const auto& f : item.findings) {
    j["findings"].push_back(
        {{"code", f.code}, {"message", f.message}, {"severity", std::string(severity_name(f.severity))}});
  }
  return j;
}

void emit(YAML::Emitter& out, const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::object:
      if (v.empty()) out << YAML::Flow;  // {} on the key's line
      out << YAML::BeginMap;
      for (const auto& [key, value] : v.items()) {
        out << YAML::Key << key << YAML::Value;
        emit(out, value);
      }
      out << YAML::EndMap;
      break;
    case nlohmann::json::value_t::array:
      if (v.empty()) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (const auto& value : v) emit(out, value);
      out << YAML::EndSeq;
      break;
    case nlohmann::json::value_t::string: {
      // Quote anything that would read back as another type.
      const auto& s = v.get_ref<const std::string&>();
      bool plain = !s.empty() && s != "true" && s != "false" && s != "null" && s != "~" &&
                   s.find_first_not_of("0123456789.+-eE") != std::string::npos;
      if (plain) {
        out << s;
      } else {
        out << YAML::DoubleQuoted << s;
      }
      break;
    }
    case nlohmann::json::value_t::boolean:
      out << (v.get<bool>() ? "true" : "false");
      break;
    case nlohmann::json::value_t::null:
      out << YAML::Null;
      break;
    default:
      out << v.dump();
  }
}

}  // namespace

namespace {

// Everything but the items' content: "items" is an empty array.
nlohmann::json head_json(const Plan& plan) {
  nlohmann::json j;
  j["schema"] = "isoharness.plan/v1";
  j["accepted"] = plan.accepted();
  j["scenario"] = {{"name", plan.scenario_name},
                   {"path", plan.scenario_path},
                   {"bare_eval_set", plan.bare_eval_set},
                   {"matrix",
                    {{"runtimes", plan.matrix.runtimes},
                     {"node_classes", plan.matrix.node_classes},
                     {"attempts", plan.matrix.attempts}}},
                   {"tolerance", plan.tolerance}};
  j["scenario"]["workloads"] = nlohmann::json::array();
  for (const auto& w : plan.workloads)
    j["scenario"]["workloads"].push_back({{"name", w.name}, {"weight", w.weight}});
  j["deployment"] = {{"name", plan.deployment_name},
                     {"path", plan.deployment_path},
                     {"runtime_classes", plan.deployment_runtime_classes},
                     {"sandbox_runtime_class", optional_string(plan.deployment_sandbox_runtime_class)}};
  j["options"] = {{"deny_known_risks", plan.deny_known_risks},
                  {"runtime_class_override", optional_string(plan.runtime_class_override)}};
  j["items"] = nlohmann::json::array();
  j["errors"] = nlohmann::json::array();
  for (const auto& d : plan.errors) j["errors"].push_back(diagnostic_json(d));
  j["known_risks"] = plan.known_risk_count();
  return j;
}

}  // namespace

std::string_view severity_name(Severity severity) {
  return severity == Severity::known_risk ? "known_risk" : "note";
}

nlohmann::json to_json(const Plan& plan) {
  nlohmann::json j = head_json(plan);
  for (const auto& item : plan.items) j["items"].push_back(item_json(item));
  return j;
}

void write_json(const Plan& plan, std::ostream& out) {
  const std::string head = head_json(plan).dump(2);
  const std::string empty_items = "\n  \"items\": [],";
  const auto at = head.find(empty_items);
  ISOHARNESS_CHECK(at != std::string::npos);
  if (plan.items.empty()) {
    out << head << "\n";
    return;
  }
  // Each item as dump(2) would write it inside the document: two levels deeper.
  out << head.substr(0, at) << "\n  \"items\": [";
  for (std::size_t i = 0; i < plan.items.size(); ++i) {
    std::string text = item_json(plan.items[i]).dump(2);
    for (auto nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', nl + 1))
      text.insert(nl + 1, 4, ' ');
    out << (i ? ",\n    " : "\n    ") << text;
  }
  out << "\n  ],";
  out << head.substr(at + empty_items.size()) << "\n";
}

std::string to_values_yaml(const Plan& plan) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  for (const auto& item : plan.items) {
    out << YAML::Key << item.id << YAML::Value;
    emit(out, item.values.get());
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace isoharness::policy
