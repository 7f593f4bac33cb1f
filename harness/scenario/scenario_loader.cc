// Scenario files: a wrapped eval-set config plus harness facts, matrix, workloads, parity.
// Facts are matched to items by position: `task` (index into eval_set.tasks, or a task name
// that occurs once) and `item` (index into that task's items), optionally checked by the
// item's `name`. See scenarios/README.md.
#include <algorithm>
#include <cmath>
#include <set>

#include "harness/scenario/item_facts.h"
#include "harness/scenario/named_mixes.h"
#include "harness/scenario/scenario.h"

namespace isoharness::scenario {

namespace {

std::string dir_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string stem_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  auto dot = base.find('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

// The shape the policy relies on: tasks[] with name and items[] with name.
void check_eval_set_shape(const Scenario& s, std::vector<Diagnostic>& errors) {
  const auto& e = s.eval_set;
  if (!e.is_object()) {
    errors.push_back(s.at_eval_set("", "", "the eval-set config must be a mapping"));
    return;
  }
  if (!e.contains("tasks") || !e["tasks"].is_array() || e["tasks"].empty()) {
    errors.push_back(s.at_eval_set(e.contains("tasks") ? "/tasks" : "", "",
                                   "tasks must be a non-empty list of {package, name, items}"));
    return;
  }
  const auto& tasks = e["tasks"];
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    const std::string tp = pointer_join("/tasks", t);
    const auto& task = tasks[t];
    const std::string where = "tasks[" + std::to_string(t) + "]";
    if (!task.is_object()) {
      errors.push_back(s.at_eval_set(tp, where, "a task must be a mapping with package, name and items"));
      continue;
    }
    if (!task.contains("name") || !task["name"].is_string() || task["name"].get<std::string>().empty()) {
      errors.push_back(s.at_eval_set(task.contains("name") ? pointer_join(tp, "name") : tp, where,
                                     "a task needs a name (the task's name within its package)"));
    }
    if (task.contains("package") && !task["package"].is_string()) {
      errors.push_back(s.at_eval_set(pointer_join(tp, "package"), where, "package must be a string"));
    }
    if (!task.contains("items") || !task["items"].is_array() || task["items"].empty()) {
      errors.push_back(s.at_eval_set(task.contains("items") ? pointer_join(tp, "items") : tp, where,
                                     "items must be a non-empty list of {name, args, sample_ids}"));
      continue;
    }
    for (std::size_t i = 0; i < task["items"].size(); ++i) {
      const auto& item = task["items"][i];
      const std::string ip = pointer_join(pointer_join(tp, "items"), i);
      const std::string iw = where + ".items[" + std::to_string(i) + "]";
      if (!item.is_object()) {
        errors.push_back(s.at_eval_set(ip, iw, "an item must be a mapping with name, args, sample_ids"));
        continue;
      }
      if (!item.contains("name") || !item["name"].is_string() || item["name"].get<std::string>().empty()) {
        errors.push_back(
            s.at_eval_set(item.contains("name") ? pointer_join(ip, "name") : ip, iw, "an item needs a name"));
      }
      if (item.contains("args") && !item["args"].is_object() && !item["args"].is_null()) {
        errors.push_back(s.at_eval_set(pointer_join(ip, "args"), iw, "args must be a mapping"));
      }
      if (item.contains("sample_ids") && !item["sample_ids"].is_array() && !item["sample_ids"].is_null()) {
        errors.push_back(s.at_eval_set(pointer_join(ip, "sample_ids"), iw, "sample_ids must be a list"));
      }
    }
  }
}

std::optional<std::size_t> resolve_task(const Scenario& s, const nlohmann::json& ref,
                                        const std::string& pointer, std::vector<Diagnostic>& errors) {
  const auto& tasks = s.eval_set["tasks"];
  if (ref.is_number_integer()) {
    auto idx = ref.get<std::int64_t>();
    if (idx >= 0 && static_cast<std::size_t>(idx) < tasks.size()) return static_cast<std::size_t>(idx);
    errors.push_back(s.scenario_source.diagnostic(pointer, "",
                                                  "task index " + std::to_string(idx) +
                                                      " is out of range (the eval set has " +
                                                      std::to_string(tasks.size()) + " tasks)"));
    return std::nullopt;
  }
  if (ref.is_string()) {
    std::vector<std::size_t> hits;
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      if (tasks[t].is_object() && tasks[t].value("name", nlohmann::json()) == ref) hits.push_back(t);
    }
    if (hits.size() == 1) return hits[0];
    errors.push_back(s.scenario_source.diagnostic(
        pointer, "",
        hits.empty() ? "no task is named '" + ref.get<std::string>() + "'"
                     : "task name '" + ref.get<std::string>() + "' occurs " + std::to_string(hits.size()) +
                           " times; use the task's index instead"));
    return std::nullopt;
  }
  errors.push_back(s.scenario_source.diagnostic(pointer, "", "task must be a task index or a task name"));
  return std::nullopt;
}

void load_facts(Scenario& s, const nlohmann::json& doc, std::vector<Diagnostic>& errors) {
  ItemFacts base = default_item_facts();
  if (doc.contains("sandbox_defaults")) {
    apply_facts(doc["sandbox_defaults"], "/sandbox_defaults", s.scenario_source, base, errors);
  }
  const auto& tasks = s.eval_set["tasks"];
  s.facts.clear();
  for (const auto& task : tasks) s.facts.emplace_back(task["items"].size(), base);
  if (!doc.contains("sandboxes")) return;
  const auto& entries = doc["sandboxes"];
  if (!entries.is_array()) {
    errors.push_back(
        s.scenario_source.diagnostic("/sandboxes", "", "sandboxes must be a list of facts entries"));
    return;
  }
  std::set<std::pair<std::size_t, std::size_t>> seen;
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const std::string p = pointer_join("/sandboxes", k);
    const auto& entry = entries[k];
    if (!entry.is_object() || !entry.contains("task") || !entry.contains("item")) {
      errors.push_back(s.scenario_source.diagnostic(
          p, "", "a sandboxes entry names its item with task (index or name) and item (index in that task)"));
      continue;
    }
    auto t = resolve_task(s, entry["task"], pointer_join(p, "task"), errors);
    if (!t) continue;
    const auto& items = tasks[*t]["items"];
    const auto& iref = entry["item"];
    if (!iref.is_number_integer() || iref.get<std::int64_t>() < 0 ||
        static_cast<std::size_t>(iref.get<std::int64_t>()) >= items.size()) {
      errors.push_back(s.scenario_source.diagnostic(
          pointer_join(p, "item"), "",
          "item must be an index into the task's items (0.." + std::to_string(items.size() - 1) + ")"));
      continue;
    }
    auto i = static_cast<std::size_t>(iref.get<std::int64_t>());
    if (entry.contains("name") && entry["name"] != items[i].value("name", nlohmann::json())) {
      errors.push_back(s.scenario_source.diagnostic(
          pointer_join(p, "name"), "",
          "names item " + brief_json(entry["name"]) + " but tasks[" + std::to_string(*t) + "].items[" +
              std::to_string(i) + "] is " + brief_json(items[i].value("name", nlohmann::json())) +
              "; fix the index or the name"));
      continue;
    }
    if (!seen.insert({*t, i}).second) {
      errors.push_back(s.scenario_source.diagnostic(
          p, "",
          "a second facts entry for tasks[" + std::to_string(*t) + "].items[" + std::to_string(i) + "]"));
      continue;
    }
    ItemFacts& f = s.facts[*t][i];
    apply_facts(entry, p, s.scenario_source, f, errors, {"task", "item", "name"});
    f.declared = true;
    f.pointer = p;
  }
}

// Where the run settings of a scenario report their problems.
struct SettingsErrors {
  const SourceMap& source;
  std::vector<Diagnostic>& errors;
  void operator()(const std::string& p, std::string m) const {
    errors.push_back(source.diagnostic(p, "", std::move(m)));
  }
};

void read_name_list(const nlohmann::json& v, const std::string& p, const SettingsErrors& err,
                    std::vector<std::string>& out) {
  if (!v.is_array() || v.empty()) {
    err(p, "must be a non-empty list of names");
    return;
  }
  out.clear();
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i].is_string() && !v[i].get<std::string>().empty()) {
      out.push_back(v[i].get<std::string>());
    } else {
      err(pointer_join(p, i), "must be a name");
    }
  }
}

// matrix: {runtimes, node_classes, attempts}.
void read_matrix(const nlohmann::json& m, const SettingsErrors& err, Scenario& s) {
  if (!m.is_object()) {
    err("/matrix", "matrix must be a mapping {runtimes, node_classes, attempts}");
    return;
  }
  for (const auto& [key, value] : m.items()) {
    const std::string p = pointer_join("/matrix", key);
    if (key == "runtimes") {
      read_name_list(value, p, err, s.matrix.runtimes);
    } else if (key == "node_classes") {
      read_name_list(value, p, err, s.matrix.node_classes);
    } else if (key == "attempts") {
      if (value.is_number_integer() && value.get<std::int64_t>() >= 1 && value.get<std::int64_t>() <= 100) {
        s.matrix.attempts = static_cast<int>(value.get<std::int64_t>());
      } else {
        err(p, "attempts must be a whole number from 1 to 100");
      }
    } else {
      err(p, "unknown matrix key '" + key + "' (known: runtimes, node_classes, attempts)");
    }
  }
}

// One workload: a name, or {name, weight}.
void read_workload(const nlohmann::json& w, const std::string& p, const SettingsErrors& err, Scenario& s) {
  if (w.is_string()) {
    s.workloads.push_back({w.get<std::string>(), 1.0});
    return;
  }
  if (!w.is_object() || !w.contains("name") || !w["name"].is_string()) {
    err(p, "a workload is {name, weight}");
    return;
  }
  Workload wl{w["name"].get<std::string>(), 1.0};
  if (w.contains("weight")) {
    if (w["weight"].is_number() && w["weight"].get<double>() >= 0 &&
        std::isfinite(w["weight"].get<double>())) {
      wl.weight = w["weight"].get<double>();
    } else {
      err(pointer_join(p, "weight"),
          "weight must be a number >= 0 (0: measured and shown, not part of the verdict)");
    }
  }
  for (const auto& [key, value] : w.items()) {
    if (key != "name" && key != "weight") err(pointer_join(p, key), "unknown workload key '" + key + "'");
  }
  s.workloads.push_back(wl);
}

// parity: {tolerance}.
void read_parity(const nlohmann::json& par, const SettingsErrors& err, Scenario& s) {
  if (!par.is_object()) {
    err("/parity", "parity must be a mapping {tolerance}");
    return;
  }
  for (const auto& [key, value] : par.items()) {
    if (key == "tolerance") {
      if (value.is_number() && value.get<double>() > 1.0 && value.get<double>() < 100.0) {
        s.tolerance = value.get<double>();
      } else {
        err("/parity/tolerance", "tolerance is a ratio above 1, e.g. 1.10 for 10 %");
      }
    } else {
      err(pointer_join("/parity", key), "unknown parity key '" + key + "' (known: tolerance)");
    }
  }
}

void load_run_settings(Scenario& s, const nlohmann::json& doc, std::vector<Diagnostic>& errors) {
  const SettingsErrors err{s.scenario_source, errors};
  if (doc.contains("matrix")) read_matrix(doc["matrix"], err, s);
  if (doc.contains("workloads")) {
    const auto& w = doc["workloads"];
    if (!w.is_array()) {
      err("/workloads", "workloads must be a list of {name, weight}");
    } else {
      for (std::size_t i = 0; i < w.size(); ++i) read_workload(w[i], pointer_join("/workloads", i), err, s);
    }
  }
  if (doc.contains("parity")) read_parity(doc["parity"], err, s);
}

}  // namespace

namespace {

// `expect: refused`, `reason: TEXT`, `or_never_running: BOOL` (scenarios/refused/).
void read_refusal_keys(const nlohmann::json& v, const SourceMap& source, Scenario& s,
                       std::vector<Diagnostic>& errors) {
  if (v.contains("expect")) {
    if (v["expect"] == "refused")
      s.expect_refused = true;
    else
      errors.push_back(source.diagnostic("/expect", "", "expect must be 'refused' (or left out)"));
  }
  if (v.contains("reason")) {
    if (v["reason"].is_string() && !v["reason"].get<std::string>().empty())
      s.refusal_reason = v["reason"].get<std::string>();
    else
      errors.push_back(source.diagnostic("/reason", "", "reason must be a non-empty string"));
  }
  if (v.contains("or_never_running")) {
    if (v["or_never_running"].is_boolean())
      s.refusal_or_never_running = v["or_never_running"].get<bool>();
    else
      errors.push_back(source.diagnostic("/or_never_running", "", "or_never_running must be true or false"));
  }
  if (!s.expect_refused && (v.contains("reason") || v.contains("or_never_running")))
    errors.push_back(source.diagnostic("/reason", "", "reason and or_never_running go with expect: refused"));
}

// A scenario's own keys (everything but a bare eval-set config): name, description, the
// refusal keys, and the eval set, inline or in its own file relative to the scenario.
void read_scenario_header(const nlohmann::json& v, const SourceMap& source, const std::string& path,
                          Scenario& s, std::vector<Diagnostic>& errors) {
  static const std::set<std::string> known = {"name",   "description",      "eval_set",         "sandboxes",
                                              "matrix", "sandbox_defaults", "workloads",        "parity",
                                              "expect", "reason",           "or_never_running", "mixes"};
  for (const auto& [key, value] : v.items()) {
    if (!known.count(key)) {
      errors.push_back(source.diagnostic(pointer_join("", key), "",
                                         "unknown scenario key '" + key +
                                             "' (known: name, description, eval_set, sandbox_defaults, "
                                             "sandboxes, matrix, workloads, mixes, parity, expect, reason, "
                                             "or_never_running; "
                                             "eval-set keys go under eval_set)"));
    }
  }
  if (v.contains("name")) {
    if (v["name"].is_string() && !v["name"].get<std::string>().empty()) {
      s.name = v["name"].get<std::string>();
    } else {
      errors.push_back(source.diagnostic("/name", "", "name must be a non-empty string"));
    }
  }
  if (v.contains("description") && v["description"].is_string())
    s.description = v["description"].get<std::string>();
  read_refusal_keys(v, source, s, errors);
  if (v["eval_set"].is_string()) {
    // A separate eval-set file, relative to the scenario.
    std::string ref = v["eval_set"].get<std::string>();
    std::string file = ref.starts_with("/") ? ref : dir_of(path) + "/" + ref;
    YamlDocument inner = load_yaml_file(file);
    s.eval_set = inner.value;
    s.eval_set_source = inner.source;
  } else {
    s.eval_set = v["eval_set"];
    s.eval_set_source = source;
    s.eval_set_prefix = "/eval_set";
  }
}

}  // namespace

Scenario parse_scenario(std::string_view yaml_text, const std::string& path) {
  YamlDocument doc = parse_yaml(yaml_text, path);
  Scenario s;
  s.path = path;
  s.name = stem_of(path);
  s.scenario_source = doc.source;
  std::vector<Diagnostic> errors;
  const auto& v = doc.value;
  if (!v.is_object() || (!v.contains("eval_set") && !v.contains("tasks"))) {
    throw UserError({doc.source.diagnostic(
        "", "",
        "neither a scenario (with eval_set) nor an eval-set config (with tasks); see scenarios/README.md")});
  }
  if (!v.contains("eval_set")) {
    s.bare_eval_set = true;
    s.eval_set = v;
    s.eval_set_source = doc.source;
  } else {
    read_scenario_header(v, doc.source, path, s, errors);
  }
  check_eval_set_shape(s, errors);
  if (!errors.empty()) throw UserError(std::move(errors));
  load_facts(s, s.bare_eval_set ? nlohmann::json::object() : v, errors);
  if (!s.bare_eval_set) load_run_settings(s, v, errors);
  if (!s.bare_eval_set && v.contains("mixes")) read_named_mixes(v["mixes"], s, errors);
  if (!errors.empty()) throw UserError(std::move(errors));
  return s;
}

Scenario load_scenario(const std::string& path) {
  return parse_scenario(read_input_file(path), path);
}

std::string describe_item(const nlohmann::json& eval_set, std::size_t t, std::size_t i) {
  const auto& task = eval_set["tasks"][t];
  const auto& item = task["items"][i];
  std::string out = "task " + task.value("name", std::string("?")) + ", item " +
                    item.value("name", std::string("?")) + " (tasks[" + std::to_string(t) + "].items[" +
                    std::to_string(i) + "]";
  if (task.contains("package") && task["package"].is_string())
    out += "; package " + task["package"].get<std::string>();
  if (item.contains("args") && !item["args"].is_null()) out += "; args " + brief_json(item["args"], 100);
  if (item.contains("sample_ids") && !item["sample_ids"].is_null())
    out += "; sample_ids " + brief_json(item["sample_ids"], 80);
  out += ")";
  return out;
}

}  // namespace isoharness::scenario
