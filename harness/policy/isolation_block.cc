#include "harness/policy/isolation_block.h"

#include <regex>

#include "harness/policy/network_names.h"
#include "harness/scenario/source_map.h"

namespace isoharness::policy {

using scenario::brief_json;
using scenario::pointer_join;

std::string_view level_name(Level level) {
  return level == Level::strict ? "strict" : "standard";
}

std::string_view runtime_class_source_name(RuntimeClassSource source) {
  switch (source) {
    case RuntimeClassSource::isolation:
      return "isolation";
    case RuntimeClassSource::option:
      return "option";
    case RuntimeClassSource::hardened:
      return "hardened";
    case RuntimeClassSource::task:
      return "task";
    case RuntimeClassSource::deployment_default:
      return "deployment_default";
    case RuntimeClassSource::none:
      return "none";
    case RuntimeClassSource::gpu_exempt:
      return "gpu_exempt";
  }
  return "none";
}

std::optional<Level> parse_level(const nlohmann::json& v) {
  if (v == "standard") return Level::standard;
  if (v == "strict") return Level::strict;
  return std::nullopt;
}

namespace {

const char* kLevels = "standard or strict";

std::optional<std::vector<std::string>> string_list(const nlohmann::json& v, const std::string& pointer,
                                                    const char* key, const ReportFn& report) {
  if (!v.is_array()) {
    report(pointer, std::string(key) + " must be a list, e.g. " +
                        (std::string(key) == "allow_domains" ? "[target.example.com]" : "[198.51.100.0/24]"));
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool ok = true;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string p = pointer_join(pointer, i);
    if (!v[i].is_string()) {
      report(p, std::string(key) + " entries are strings; got " + brief_json(v[i]));
      ok = false;
      continue;
    }
    std::string s = v[i].get<std::string>();
    auto problem = std::string(key) == "allow_domains" ? check_domain(s) : check_cidr(s);
    if (problem) {
      report(p, std::string(key) + ": '" + s + "' is malformed: " + *problem);
      ok = false;
      continue;
    }
    out.push_back(std::move(s));
  }
  if (!ok) return std::nullopt;
  return out;
}

// One key of an isolation mapping, into the block (or a report naming it).
void parse_isolation_key(IsolationBlock& b, const std::string& key, const nlohmann::json& value,
                         const std::string& p, const ReportFn& report) {
  if (key == "level") {
    b.level = parse_level(value);
    if (!b.level) report(p, "unknown isolation level " + brief_json(value) + " (use " + kLevels + ")");
  } else if (key == "runtime_class") {
    static const std::regex re("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");
    if (value.is_string() && value.get<std::string>().size() <= 253 &&
        std::regex_match(value.get<std::string>(), re)) {
      b.runtime_class = value.get<std::string>();
    } else {
      report(p, "runtime_class must be a runtime class name such as gvisor; got " + brief_json(value));
    }
  } else if (key == "allow_domains") {
    b.allow_domains = string_list(value, p, "allow_domains", report);
  } else if (key == "allow_cidr") {
    b.allow_cidr = string_list(value, p, "allow_cidr", report);
  } else if (key == "non_root" || key == "read_only_root") {
    if (!value.is_boolean()) {
      report(p, key + " must be true or false; got " + brief_json(value));
    } else if (key == "non_root") {
      b.non_root = value.get<bool>();
    } else {
      b.read_only_root = value.get<bool>();
    }
  } else {
    std::string hint;
    if (key == "network_mode") hint = " (egress is named with allow_domains / allow_cidr)";
    if (key == "allow_entities" || key == "allowEntities") hint = " (strict never opens entities)";
    if (key == "runtimeClassName" || key == "runtime") hint = " (did you mean runtime_class?)";
    report(p, "unknown isolation key '" + key +
                  "'; known keys: level, runtime_class, allow_domains, allow_cidr, non_root, read_only_root" +
                  hint);
  }
}

}  // namespace

IsolationBlock parse_isolation_block(const nlohmann::json& v, const std::string& pointer,
                                     const ReportFn& report) {
  IsolationBlock b;
  b.present = true;
  b.pointer = pointer;
  if (v.is_string()) {
    b.level = parse_level(v);
    if (!b.level)
      report(pointer, "unknown isolation level '" + v.get<std::string>() + "' (use " + kLevels + ")");
    return b;
  }
  if (v.is_null()) {
    report(pointer,
           "empty isolation block: write `isolation: standard` or `isolation: strict`, or remove it");
    return b;
  }
  if (!v.is_object()) {
    report(pointer,
           "isolation must be a level (standard, strict) or a mapping with level, runtime_class, "
           "allow_domains, allow_cidr, non_root, read_only_root");
    return b;
  }
  b.is_mapping = true;
  for (const auto& [key, value] : v.items())
    parse_isolation_key(b, key, value, pointer_join(pointer, key), report);
  return b;
}

}  // namespace isoharness::policy
