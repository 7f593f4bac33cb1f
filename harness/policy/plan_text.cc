// The plan for people: one table per item (control, setting), findings right under it,
// errors, and a one-line verdict.
#include <fmt/format.h>

#include "harness/policy/plan.h"

namespace isoharness::policy {

namespace {

struct Style {
  bool color;
  std::string bold(const std::string& s) const { return color ? "\x1b[1m" + s + "\x1b[0m" : s; }
  std::string red(const std::string& s) const { return color ? "\x1b[31m" + s + "\x1b[0m" : s; }
  std::string yellow(const std::string& s) const { return color ? "\x1b[33m" + s + "\x1b[0m" : s; }
  std::string green(const std::string& s) const { return color ? "\x1b[32m" + s + "\x1b[0m" : s; }
  std::string dim(const std::string& s) const { return color ? "\x1b[2m" + s + "\x1b[0m" : s; }
};

std::string join(const nlohmann::json& list) {
  std::string out;
  for (const auto& s : list)
    out += (out.empty() ? "" : ", ") + (s.is_string() ? s.get<std::string>() : s.dump());
  return out;
}

std::vector<std::pair<std::string, std::string>> rows(const PlanItem& item) {
  const nlohmann::json& e = item.expect;
  const auto& def = item.values["services"].contains("default") ? item.values["services"]["default"]
                                                                : nlohmann::json::object();
  const auto sc = def.value("securityContext", nlohmann::json::object());
  std::vector<std::pair<std::string, std::string>> r;
  std::string runtime = item.runtime_class ? *item.runtime_class + " (" + e.value("runtime", "") + ")"
                                           : std::string("node default (runc)");
  runtime += ", kernel: " + e.value("kernel", std::string());
  r.push_back({"runtime", runtime + "  [" + item.runtime_class_source + "]"});
  r.push_back({"privilege escalation", sc.contains("allowPrivilegeEscalation")
                                           ? "denied (no_new_privs)"
                                           : "permitted (runtime default)"});
  r.push_back({"capabilities", sc.contains("capabilities")
                                   ? "drop ALL (CapEff 0000000000000000)"
                                   : "runtime default (" + e.value("cap_eff_default", "") + ")"});
  r.push_back({"seccomp", sc.contains("seccompProfile") ? "RuntimeDefault, pinned" : "runtime default"});
  r.push_back({"user", sc.contains("runAsUser") ? "non-root, uid 1000" : "image default"});
  r.push_back({"root filesystem", sc.contains("readOnlyRootFilesystem")
                                      ? "read-only, scratch at " + join(e["writable_paths"])
                                      : "writable"});
  std::string egress = "none";
  if (item.values.contains("allowDomains") || item.values.contains("allowCIDR")) {
    egress.clear();
    if (item.values.contains("allowDomains")) egress += "domains " + join(item.values["allowDomains"]);
    if (item.values.contains("allowCIDR"))
      egress += std::string(egress.empty() ? "" : "; ") + "ranges " + join(item.values["allowCIDR"]);
  }
  r.push_back({"egress", egress});
  std::string services;
  for (const auto& [name, sv] : item.values["services"].items()) {
    services += (services.empty() ? "" : ", ") + name;
    if (sv.value("gpu", false)) services += " (gpu)";
    if (sv.contains("networkMode")) services += " (network " + sv["networkMode"].get<std::string>() + ")";
  }
  r.push_back({"services", services});
  return r;
}

}  // namespace

std::string to_text(const Plan& plan, bool color) {
  Style st{color};
  std::string out;
  out += st.bold(fmt::format("plan {} ", plan.scenario_name)) +
         st.dim(fmt::format(
             "({}; deployment {}, hardened class {}{})", plan.scenario_path, plan.deployment_name,
             plan.deployment_sandbox_runtime_class.value_or("none"),
             plan.runtime_class_override ? ", runtime class " + *plan.runtime_class_override : "")) +
         "\n";
  for (const auto& item : plan.items) {
    out += "\n" + st.bold(item.id) + "  " +
           (item.level == Level::strict ? st.green("strict") : std::string("standard")) + "\n";
    out += "  " + st.dim(item.description) + "\n";
    for (const auto& [control, setting] : rows(item)) out += fmt::format("  {:<22}{}\n", control, setting);
    for (const auto& f : item.findings) {
      if (f.severity == Severity::known_risk) {
        out += "  " + st.red("KNOWN RISK") + " " + f.code + ": " + f.message + "\n";
      } else {
        out += "  " + st.yellow("note") + " " + f.code + ": " + f.message + "\n";
      }
    }
  }
  if (!plan.errors.empty()) {
    out += "\n" + st.red(st.bold("errors")) + "\n";
    for (const auto& d : plan.errors) out += "  " + d.to_string() + "\n";
  }
  std::size_t strict = 0;
  for (const auto& item : plan.items) strict += item.level == Level::strict ? 1 : 0;
  out += "\n" +
         fmt::format("{} items ({} strict), {} known risk(s), {} error(s): ", plan.items.size(), strict,
                     plan.known_risk_count(), plan.errors.size()) +
         (plan.accepted() ? st.green("accepted") : st.red("refused")) + "\n";
  return out;
}

}  // namespace isoharness::policy
