#include "harness/selftest/lying_agent.h"

#include <string>

namespace isoharness::selftest {
using nlohmann::json;

namespace {

bool plans_gvisor(const json& expect) {
  const auto k = expect.find("kernel");
  return k != expect.end() && k->is_string() && k->get<std::string>() == "gvisor";
}

std::string planned_bounding(const json& expect) {
  const auto c = expect.find("cap_eff");
  if (c != expect.end() && c->is_string()) return c->get<std::string>();
  const auto d = expect.find("cap_eff_default");
  return d != expect.end() && d->is_string() ? d->get<std::string>() : "0000000000000000";
}

// The host-backed mounts the plan allows, as a clean sandbox shows them: those the real
// probe saw that the plan lists; nothing else.
json allowed_mounts(const json& real, const json& expect) {
  json out = json::array();
  const auto allowed = expect.find("host_mounts_allowed");
  const auto seen = real.find("host_mounts");
  if (allowed == expect.end() || !allowed->is_array() || seen == real.end() || !seen->is_array()) return out;
  for (const auto& m : *seen) {
    const auto point = m.is_object() ? m.find("mount_point") : m.end();
    if (point == m.end() || !point->is_string()) continue;
    for (const auto& a : *allowed)
      if (a == *point) out.push_back(m);
  }
  return out;
}

// The clean value of one observation; null: keep the real one.
json clean_value(const std::string& name, const json& real, const json& expect) {
  const bool g = plans_gvisor(expect);
  if (name == "kernel")
    return {{"sysname", "Linux"},
            {"release", g ? "4.4.0" : real.value("release", "6.1.0")},
            {"version", g ? "#1 SMP Sun Jan 10 15:06:54 PST 2016" : real.value("version", "#1 SMP")},
            {"machine", "x86_64"},
            {"gvisor", g},
            {"gvisor_signals", g ? json{"version_string", "sentry_meminfo"} : json::array()}};
  if (name == "boot_id" && g) return {{"boot_id", "6f1d3a52-0c4e-4b8e-9a53-2f6b1c0d7e41"}};
  if (name == "capabilities")
    return {{"inh", "0000000000000000"},
            {"prm", "0000000000000000"},
            {"eff", "0000000000000000"},
            {"bnd", planned_bounding(expect)},
            {"amb", "0000000000000000"}};
  if (name == "no_new_privs") return true;
  if (name == "seccomp") return {{"status_mode", g ? 0 : 2}, {"prctl_mode", g ? 0 : 2}};
  if (name == "identity") {
    const auto uid = expect.find("uid");
    const long long u = uid != expect.end() && uid->is_number_integer() ? uid->get<long long>() : 1000;
    return {{"uid", u}, {"euid", u}, {"gid", real.value("gid", 1000)}, {"egid", real.value("egid", 1000)}};
  }
  if (name == "userns") return {{"created", false}};
  if (name == "mount") return {{"tmpfs_mounted", false}};
  if (name == "kallsyms") return {{"state", g ? "empty" : "zeroed"}, {"lines", g ? 0 : 1000}};
  if (name == "debugfs") return {{"present", false}, {"entries", 0}};
  if (name == "sysrq") return {{"present", true}, {"opens_for_write", false}};
  if (name == "devices") return {{"extra", json::array()}, {"total", 12}, {"truncated", false}};
  if (name == "runtime_sockets") return {{"found", json::array()}};
  if (name == "kubernetes") return {{"service_account_token", false}, {"env", json::array()}};
  if (name == "processes") return {{"visible", 3}, {"pid1", "sshd"}};
  if (name == "network") return {{"interfaces", {"lo", "eth0"}}, {"hostname", "sandbox"}};
  if (name == "filesystem") {
    json v = real.is_object() ? real : json::object();
    v["root_writable"] = false;
    v["cgroup_writable"] = false;
    json ro = json::array({"/"});
    if (const auto r = v.find("readonly_mounts"); r != v.end() && r->is_array())
      for (const auto& m : *r)
        if (m != "/") ro.push_back(m);
    v["readonly_mounts"] = ro;
    return v;
  }
  if (name == "escape_mounts")
    return {{"host_mounts", allowed_mounts(real, expect)},
            {"proc_sys_read_only", true},
            {"cgroup_writable_mounts", json::array()},
            {"release_agent_visible", false},
            {"release_agent_writable", false}};
  if (name == "bpf")
    return {
        {"unprivileged_bpf_disabled", 2}, {"map_created", false}, {"map_errno", 1}, {"route_localnet", 0}};
  return nullptr;  // egress, addresses and the rest: the real probe's
}

}  // namespace

void forge_clean_posture(json& posture, const json& expect) {
  if (!posture.is_object() || !expect.is_object()) return;
  auto obs = posture.find("observations");
  if (obs == posture.end() || !obs->is_array()) return;
  for (auto& o : *obs) {
    if (!o.is_object() || !o.contains("name") || !o["name"].is_string()) continue;
    const std::string name = o["name"].get<std::string>();
    const json real = o.contains("value") ? o["value"] : json();
    json value = clean_value(name, real, expect);
    if (value.is_null()) continue;
    o["value"] = std::move(value);
    o["status"] = "ok";
    o["errno"] = 0;
    o["evidence"] = "";
  }
}

}  // namespace isoharness::selftest
