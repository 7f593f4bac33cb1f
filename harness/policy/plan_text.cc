// The plan for people: one table per item (control, setting), findings right under it,
// errors, and a one-line verdict.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/policy/chart_values.h"
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

// A list of strings from the plan, comma-separated.
std::string listed(const nlohmann::json& list) {
  return fmt::format("{}", fmt::join(list.get<std::vector<std::string>>(), ", "));
}

std::string mode_of(const nlohmann::json& service) {
  return service_network_isolated(service) ? std::string("none") : std::string("default");
}

// One row per service with its network mode and what that means, then what the agent may
// reach: the wall a `none` service stands behind is visible to whoever reads the plan.
std::vector<std::pair<std::string, std::string>> service_rows(const nlohmann::json& values,
                                                              const std::string& egress) {
  std::vector<std::pair<std::string, std::string>> r;
  const auto services = values.value("services", nlohmann::json::object());
  const bool agent_none = services.contains("default") && mode_of(services["default"]) == "none";
  std::vector<std::string> reachable;
  for (const auto& [name, sv] : services.items()) {
    const std::string mode = mode_of(sv);
    std::string text = name + (name == "default" ? " (agent)" : "") + ": network " + mode;
    if (service_gpus(sv) > 0) text += ", gpu";
    const auto runtime = effective_runtime_class(sv);
    text += ", runtime " + (runtime ? *runtime : std::string("node default"));
    if (name != "default") {
      if (mode == "none") {
        text +=
            " - deny-all both ways; the agent cannot reach it, the harness reaches it through the runtime";
      } else if (agent_none) {
        text += " - the agent (network none) cannot reach it";
      } else {
        text += " - reachable from the agent by name";
        reachable.push_back(name);
      }
    }
    r.push_back({r.empty() ? "services" : "", text});
  }
  std::string may = agent_none ? std::string("nothing (network none)") : egress == "none" ? "" : egress;
  if (!agent_none && !reachable.empty()) {
    const std::string sib = fmt::format("{}", fmt::join(reachable, ", "));
    may = "siblings " + sib + (may.empty() ? "" : "; " + may);
  }
  r.push_back({"agent may reach", may.empty() ? "nothing" : may});
  return r;
}

// The ways out in one line: where each target may be reached, and who keeps metadata shut.
std::string ways_text(const EgressExpectations& egress) {
  std::string out;
  for (const auto& w : egress.ways) {
    std::string open;
    for (const auto& o : w.open)
      open += (open.empty() ? "" : ",") + std::string(protocol_name(o.protocol)) + "/" +
              (o.port == 0 ? std::string("*") : std::to_string(o.port));
    std::string text = w.kind == WayKind::metadata
                           ? std::string("metadata closed (by ") +
                                 (w.blocked_by == Blocker::node ? "a node setting only" : "the chart") + ")"
                           : w.target + " " + open + (w.name_checked ? " (SNI/Host checked)" : "");
    out += (out.empty() ? "" : "; ") + text;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> rows(const PlanItem& item) {
  const nlohmann::json& e = item.expect;
  const auto& def = item.values["services"].contains("default") ? item.values["services"]["default"]
                                                                : nlohmann::json::object();
  const auto sc = def.value("securityContext", nlohmann::json::object());
  std::vector<std::pair<std::string, std::string>> r;
  std::string runtime = item.runtime_class ? *item.runtime_class : std::string("node default (runc)");
  runtime += ", kernel: " + e.value("kernel", std::string());
  r.push_back(
      {"runtime", runtime + "  [" + std::string(runtime_class_source_name(item.runtime_class_source)) + "]"});
  r.push_back({"privilege escalation", sc.contains("allowPrivilegeEscalation")
                                           ? "denied (no_new_privs)"
                                           : "permitted (runtime default)"});
  r.push_back({"capabilities", sc.contains("capabilities")
                                   ? "drop ALL (CapEff 0000000000000000)"
                                   : "runtime default (" + e.value("cap_eff_default", "") + ")"});
  r.push_back({"seccomp", sc.contains("seccompProfile") ? "RuntimeDefault, pinned" : "runtime default"});
  r.push_back({"user", sc.contains("runAsUser") ? "non-root, uid 1000" : "image default"});
  r.push_back({"root filesystem", sc.contains("readOnlyRootFilesystem")
                                      ? "read-only, scratch at " + listed(e["writable_paths"])
                                      : "writable"});
  std::string egress = "none";
  if (item.values.contains("allowDomains") || item.values.contains("allowCIDR")) {
    egress.clear();
    if (item.values.contains("allowDomains")) egress += "domains " + listed(item.values["allowDomains"]);
    if (item.values.contains("allowCIDR"))
      egress += std::string(egress.empty() ? "" : "; ") + "ranges " + listed(item.values["allowCIDR"]);
  }
  r.push_back({"egress", egress});
  r.push_back({"ways out", item.egress ? ways_text(*item.egress) : std::string("none planned")});
  for (auto& row : service_rows(item.values, egress)) r.push_back(std::move(row));
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
