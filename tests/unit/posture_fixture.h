#pragma once
// One clean posture document, as isoprobe reports it from a strict sandbox with nothing
// reachable (a non-root user, a read-only root, no capabilities), for the tests of verify
// and of the runner: both judge the same document, so a probe added to isoprobe and to the
// schema is added to this fixture once. `gvisor` flips what differs under gVisor (the
// kernel it reports, seccomp done by the Sentry, user namespaces and a writable
// sysrq-trigger that are emulation, kallsyms empty, its own boot id); cap_eff is the
// effective (and permitted, bounding) capability set. A test edits the observation it is
// about with `posture_value`.

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace isoharness::test {

// One observation as isoprobe writes it.
inline nlohmann::json posture_observation(const std::string& name, nlohmann::json value) {
  return {{"name", name},
          {"status", "ok"},
          {"value", std::move(value)},
          {"errno", 0},
          {"evidence", "ev:" + name}};
}

namespace detail {

inline nlohmann::json privilege_observations(bool gvisor, const std::string& cap_eff) {
  using nlohmann::json;
  json o = json::array();
  o.push_back(posture_observation(
      "kernel", {{"sysname", "Linux"},
                 {"release", gvisor ? "4.4.0" : "6.1.0"},
                 {"version", gvisor ? "#1 SMP Sun Jan 10 15:06:54 PST 2016" : "#1 SMP"},
                 {"machine", "x86_64"},
                 {"gvisor", gvisor},
                 {"gvisor_signals", gvisor ? json{"version_string", "sentry_meminfo"} : json::array()}}));
  o.push_back(posture_observation("capabilities", {{"inh", "0000000000000000"},
                                                   {"prm", cap_eff},
                                                   {"eff", cap_eff},
                                                   {"bnd", cap_eff},
                                                   {"amb", "0000000000000000"}}));
  o.push_back(posture_observation("no_new_privs", true));
  o.push_back(
      posture_observation("seccomp", {{"status_mode", gvisor ? 0 : 2}, {"prctl_mode", gvisor ? 0 : 2}}));
  o.push_back(
      posture_observation("identity", {{"uid", 1000}, {"euid", 1000}, {"gid", 1000}, {"egid", 1000}}));
  o.push_back(posture_observation("userns", {{"created", gvisor}}));
  o.push_back(posture_observation("mount", {{"tmpfs_mounted", false}}));
  o.push_back(posture_observation("kallsyms",
                                  {{"state", gvisor ? "empty" : "zeroed"}, {"lines", gvisor ? 0 : 1000}}));
  o.push_back(posture_observation("debugfs", {{"present", false}, {"entries", 0}}));
  o.push_back(posture_observation("sysrq", {{"present", true}, {"opens_for_write", gvisor}}));
  o.push_back(posture_observation("devices", {{"extra", json::array()}}));
  o.push_back(posture_observation("runtime_sockets", {{"found", json::array()}}));
  o.push_back(posture_observation("kubernetes", {{"service_account_token", false}, {"env", json::array()}}));
  o.push_back(posture_observation("processes", {{"visible", 3}, {"pid1", "sshd"}}));
  return o;
}

inline void add_filesystem_and_network(nlohmann::json& o, bool gvisor) {
  using nlohmann::json;
  o.push_back(posture_observation("network", {{"interfaces", {"lo", "eth0"}}, {"hostname", "sandbox-1"}}));
  o.push_back(posture_observation("filesystem", {{"root_writable", false},
                                                 {"readonly_mounts", {"/", "/usr"}},
                                                 {"paths", {{"/tmp", true}, {"/home/agent", true}}},
                                                 {"cgroup_writable", false}}));
  o.push_back(posture_observation("boot_id", {{"boot_id", gvisor ? "aaaa-gvisor" : "host-boot-id"}}));
  o.push_back(
      posture_observation("escape_mounts", {{"host_mounts", json::array({{{"mount_point", "/etc/resolv.conf"},
                                                                          {"fstype", "ext4"},
                                                                          {"root", "/pods/x/resolv.conf"},
                                                                          {"read_only", false}}})},
                                            {"proc_sys_read_only", !gvisor},
                                            {"cgroup_writable_mounts", json::array()},
                                            {"release_agent_visible", false},
                                            {"release_agent_writable", false}}));
  o.push_back(posture_observation(
      "bpf",
      {{"unprivileged_bpf_disabled", 2}, {"map_created", false}, {"map_errno", 1}, {"route_localnet", 0}}));
  o.push_back(posture_observation(
      "egress", {{"targets",
                  {{{"name", "target"}, {"result", "timeout"}},
                   {{"name", "metadata"}, {"result", "timeout"}},
                   {{"name", "cidr-host"}, {"result", "timeout"}},
                   {{"name", "dns"}, {"result", "dns_failed"}}}},
                 // raw and packet sockets refused (no CAP_NET_RAW), as under strict
                 {"sockets", {{"icmp_datagram", "EACCES"}, {"raw_icmp", "EPERM"}, {"packet", "EPERM"}}}}));
}

}  // namespace detail

inline nlohmann::json clean_posture(bool gvisor, const std::string& cap_eff = "0000000000000000") {
  nlohmann::json o = detail::privilege_observations(gvisor, cap_eff);
  detail::add_filesystem_and_network(o, gvisor);
  return {{"schema", "isoharness.posture/v1"}, {"observations", o}};
}

// The value of observation `name` in a posture, to edit in place (the posture must hold it).
inline nlohmann::json& posture_value(nlohmann::json& posture, const std::string& name) {
  for (auto& o : posture["observations"])
    if (o["name"] == name) return o["value"];
  throw std::out_of_range("posture fixture: no observation " + name);
}

}  // namespace isoharness::test
