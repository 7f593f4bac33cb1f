#include "reports/document_shape.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <tuple>

#include "harness/common/error.h"

namespace isoharness::reports {

namespace {

class Checker {
 public:
  explicit Checker(std::string what) : what_(std::move(what)) {}

  // Returns the member when present with the wanted type, else records a problem.
  const nlohmann::json* member(const nlohmann::json& object, const std::string& path, const char* key,
                               nlohmann::json::value_t type, bool nullable = false) {
    if (!object.is_object()) return nullptr;
    auto it = object.find(key);
    const std::string where = path + "." + key;
    if (it == object.end()) {
      problem(where, "missing");
      return nullptr;
    }
    if (nullable && it->is_null()) return nullptr;
    const bool number_ok = type == nlohmann::json::value_t::number_float && it->is_number();
    const bool int_ok = type == nlohmann::json::value_t::number_integer && it->is_number_integer();
    if (it->type() != type && !number_ok && !int_ok) {
      problem(where, fmt::format("expected {}, found {}", nlohmann::json(type).type_name(), it->type_name()));
      return nullptr;
    }
    return &*it;
  }

  void problem(const std::string& where, const std::string& message) {
    Diagnostic d;
    d.item = where;
    d.message = message;
    diagnostics_.push_back(std::move(d));
  }

  void finish() {
    if (diagnostics_.empty()) return;
    Diagnostic head;
    head.message = what_ + " cannot be rendered:";
    diagnostics_.insert(diagnostics_.begin(), head);
    throw UserError(std::move(diagnostics_));
  }

 private:
  std::string what_;
  std::vector<Diagnostic> diagnostics_;
};

using T = nlohmann::json::value_t;

void check_section(Checker& c, const nlohmann::json& s, const std::string& path) {
  if (!s.is_object()) {
    c.problem(path, "expected an object");
    return;
  }
  c.member(s, path, "baseline", T::string);
  c.member(s, path, "tolerance", T::number_float);
  if (const auto* cells = c.member(s, path, "cells", T::array)) {
    for (std::size_t i = 0; i < cells->size(); ++i) {
      const auto& cell = (*cells)[i];
      const std::string cp = fmt::format("{}.cells[{}]", path, i);
      c.member(cell, cp, "name", T::string);
      if (const auto* comps = c.member(cell, cp, "comparisons", T::array)) {
        for (std::size_t k = 0; k < comps->size(); ++k) {
          const auto& comp = (*comps)[k];
          const std::string kp = fmt::format("{}.comparisons[{}]", cp, k);
          c.member(comp, kp, "workload", T::string);
          c.member(comp, kp, "n_baseline", T::number_integer);
          c.member(comp, kp, "n_candidate", T::number_integer);
          c.member(comp, kp, "p_value", T::number_float);
          c.member(comp, kp, "verdict", T::string);
          if (const auto* r = c.member(comp, kp, "ratio", T::object)) {
            for (const char* key : {"estimate", "low", "high"})
              c.member(*r, kp + ".ratio", key, T::number_float);
          }
        }
      }
      if (const auto* mix = c.member(cell, cp, "mix", T::object)) {
        const auto* verdict = c.member(*mix, cp + ".mix", "verdict", T::string);
        const bool no_mix = verdict && *verdict == "no_mix";  // nothing weighted: slowdown null
        if (const auto* sd = c.member(*mix, cp + ".mix", "slowdown", T::object, no_mix)) {
          for (const char* key : {"estimate", "low", "high"})
            c.member(*sd, cp + ".mix.slowdown", key, T::number_float);
        }
      }
    }
  }
  if (const auto* samples = c.member(s, path, "samples", T::object)) {
    for (const auto& [cell, workloads] : samples->items()) {
      const std::string sp = path + ".samples." + cell;
      if (!workloads.is_object()) {
        c.problem(sp, "expected an object of workload -> [seconds]");
        continue;
      }
      for (const auto& [w, times] : workloads.items()) {
        bool ok = times.is_array();
        for (const auto& t : times) ok = ok && t.is_number() && t.get<double>() > 0;
        if (!ok) c.problem(sp + "." + w, "expected an array of positive numbers (seconds)");
      }
    }
  }
}

}  // namespace

void check_result_shape(const nlohmann::json& r) {
  Checker c("result document");
  if (!r.is_object()) {
    c.problem("$", "expected a JSON object");
    c.finish();
  }
  if (const auto* schema = c.member(r, "$", "schema", T::string)) {
    if (schema->get<std::string>() != "isoharness.result/v1") {
      c.problem("$.schema", fmt::format("'{}' is not isoharness.result/v1", schema->get<std::string>()));
    }
  }
  c.member(r, "$", "context", T::object);
  if (const auto* sandboxes = c.member(r, "$", "sandboxes", T::array)) {
    for (std::size_t i = 0; i < sandboxes->size(); ++i) {
      const auto& sb = (*sandboxes)[i];
      const std::string p = fmt::format("$.sandboxes[{}]", i);
      if (!sb.is_object()) {
        c.problem(p, "expected an object");
        continue;
      }
      for (const char* key : {"scenario", "item_id", "runtime", "node_class"})
        c.member(sb, p, key, T::string);
      c.member(sb, p, "attempt", T::number_integer);
      if (const auto* checks = c.member(sb, p, "checks", T::array)) {
        for (std::size_t k = 0; k < checks->size(); ++k) {
          const std::string kp = fmt::format("{}.checks[{}]", p, k);
          c.member((*checks)[k], kp, "control", T::string);
          if (const auto* st = c.member((*checks)[k], kp, "status", T::string)) {
            const auto v = st->get<std::string>();
            if (v != "pass" && v != "fail" && v != "n/a" && v != "unwitnessed")
              c.problem(kp + ".status", "'" + v + "' is not pass, fail, n/a or unwitnessed");
          }
        }
      }
    }
  }
  if (const auto* findings = c.member(r, "$", "findings", T::array)) {
    for (std::size_t i = 0; i < findings->size(); ++i) {
      const std::string p = fmt::format("$.findings[{}]", i);
      for (const char* key : {"scenario", "code", "message"}) c.member((*findings)[i], p, key, T::string);
    }
  }
  if (const auto* summary = c.member(r, "$", "summary", T::object)) {
    c.member(*summary, "$.summary", "verdict", T::string);
  }
  if (r.contains("parity") && !r["parity"].is_null()) {
    const auto& parity = r["parity"];
    if (parity.is_array()) {
      for (std::size_t i = 0; i < parity.size(); ++i)
        check_section(c, parity[i], fmt::format("$.parity[{}]", i));
    } else {
      check_section(c, parity, "$.parity");
    }
  }
  c.finish();
}

std::vector<nlohmann::json> parity_sections(const nlohmann::json& parity) {
  if (parity.is_null()) return {};
  Checker c("parity section");
  std::vector<nlohmann::json> out;
  if (parity.is_array()) {
    for (std::size_t i = 0; i < parity.size(); ++i) {
      check_section(c, parity[i], fmt::format("parity[{}]", i));
      out.push_back(parity[i]);
    }
  } else {
    check_section(c, parity, "parity");
    out.push_back(parity);
  }
  c.finish();
  return out;
}

std::vector<const nlohmann::json*> sandboxes_in_order(const nlohmann::json& result) {
  std::vector<const nlohmann::json*> out;
  for (const auto& sb : result["sandboxes"]) out.push_back(&sb);
  auto key = [](const nlohmann::json* sb) {
    return std::make_tuple(sb->value("scenario", std::string()), sb->value("item_id", std::string()),
                           sb->value("runtime", std::string()), sb->value("node_class", std::string()),
                           sb->value("attempt", 0));
  };
  std::stable_sort(out.begin(), out.end(), [&](const auto* a, const auto* b) { return key(a) < key(b); });
  return out;
}

std::vector<const nlohmann::json*> not_run_entries(const nlohmann::json& result) {
  std::vector<const nlohmann::json*> out;
  if (!result.contains("skipped") || !result["skipped"].is_array()) return out;
  for (const auto& s : result["skipped"])
    if (s.is_object() && s.value("not_run", false)) out.push_back(&s);
  return out;
}

std::string not_run_where(const nlohmann::json& entry) {
  auto text = [&](const char* key) {
    return entry.contains(key) && entry[key].is_string() ? entry[key].get<std::string>() : std::string("?");
  };
  const int attempt =
      entry.contains("attempt") && entry["attempt"].is_number_integer() ? entry["attempt"].get<int>() : 0;
  return text("scenario") + " · " + text("item_id") + " · " + text("runtime") + " / " + text("node_class") +
         " · attempt " + std::to_string(attempt);
}

}  // namespace isoharness::reports
