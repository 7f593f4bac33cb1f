#include "harness/deploy/local/seccomp_profile.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>

namespace isoharness::deploy::local {
namespace {

using nlohmann::json;

// Go arch name -> libseccomp's name for the native architecture.
const std::map<std::string, std::string>& native_arches() {
  static const std::map<std::string, std::string> m = {
      {"amd64", "SCMP_ARCH_X86_64"},    {"arm64", "SCMP_ARCH_AARCH64"},   {"386", "SCMP_ARCH_X86"},
      {"arm", "SCMP_ARCH_ARM"},         {"ppc64le", "SCMP_ARCH_PPC64LE"}, {"s390x", "SCMP_ARCH_S390X"},
      {"riscv64", "SCMP_ARCH_RISCV64"},
  };
  return m;
}

std::pair<int, int> major_minor(std::string_view v) {
  int major = 0, minor = 0;
  auto r1 = std::from_chars(v.data(), v.data() + v.size(), major);
  if (r1.ptr < v.data() + v.size() && *r1.ptr == '.') std::from_chars(r1.ptr + 1, v.data() + v.size(), minor);
  return {major, minor};
}

bool contains(const json& list, const std::string& value) {
  if (!list.is_array()) return false;
  return std::any_of(list.begin(), list.end(), [&](const json& v) { return v.is_string() && v == value; });
}

bool has_cap(const std::vector<std::string>& caps, const std::string& cap) {
  return std::find(caps.begin(), caps.end(), cap) != caps.end();
}

// Whether the rule's includes/excludes hold for this container.
bool applies(const json& rule, const SeccompTarget& t) {
  if (rule.contains("includes") && rule["includes"].is_object()) {
    const json& inc = rule["includes"];
    if (inc.contains("arches") && inc["arches"].is_array() && !inc["arches"].empty() &&
        !contains(inc["arches"], t.go_arch))
      return false;
    if (inc.contains("caps") && inc["caps"].is_array())
      for (const auto& c : inc["caps"])
        if (!c.is_string() || !has_cap(t.capabilities, c.get<std::string>())) return false;
    if (inc.contains("minKernel") && inc["minKernel"].is_string() && !t.kernel_release.empty() &&
        !kernel_at_least(t.kernel_release, inc["minKernel"].get<std::string>()))
      return false;
  }
  if (rule.contains("excludes") && rule["excludes"].is_object()) {
    const json& exc = rule["excludes"];
    if (contains(exc.value("arches", json::array()), t.go_arch)) return false;
    if (exc.contains("caps") && exc["caps"].is_array())
      for (const auto& c : exc["caps"])
        if (c.is_string() && has_cap(t.capabilities, c.get<std::string>())) return false;
  }
  return true;
}

// containerd's default profile lets only a holder of CAP_SYS_ADMIN create namespaces;
// Debian's containers-common profile (podman's) allows unshare and clone with any flags,
// so on a host that permits unprivileged user namespaces a sandbox could create one. The
// local backend stands in for containerd, so it applies containerd's rule: without
// CAP_SYS_ADMIN, unshare is refused, clone only without namespace flags, and clone3 reads
// as unimplemented (ENOSYS) so the C library falls back to clone.
void gate_namespaces_on_sys_admin(json& rules, const SeccompTarget& t) {
  for (const auto& c : t.capabilities)
    if (c == "CAP_SYS_ADMIN") return;
  static const std::vector<std::string> kGated = {"unshare", "clone", "clone3"};
  for (auto& rule : rules) {
    if (rule.value("action", "") != "SCMP_ACT_ALLOW" || rule.contains("args")) continue;
    json kept = json::array();
    for (const auto& n : rule["names"])
      if (std::find(kGated.begin(), kGated.end(), n.get<std::string>()) == kGated.end()) kept.push_back(n);
    rule["names"] = kept;
  }
  json pruned = json::array();
  for (auto& rule : rules)
    if (!rule["names"].empty()) pruned.push_back(std::move(rule));
  rules = std::move(pruned);
  constexpr unsigned long kNamespaceFlags = 0x7E020000UL;  // CLONE_NEW{NS,CGROUP,UTS,IPC,USER,PID,NET}
  rules.push_back(
      {{"names", {"clone"}},
       {"action", "SCMP_ACT_ALLOW"},
       {"args",
        {{{"index", 0}, {"value", kNamespaceFlags}, {"valueTwo", 0}, {"op", "SCMP_CMP_MASKED_EQ"}}}}});
  rules.push_back({{"names", {"clone3"}}, {"action", "SCMP_ACT_ERRNO"}, {"errnoRet", 38}});
}

}  // namespace

bool kernel_at_least(std::string_view release, std::string_view minimum) {
  return major_minor(release) >= major_minor(minimum);
}

Expected<json> convert_seccomp_profile(const json& profile, const SeccompTarget& t) {
  if (!profile.is_object() || !profile.contains("defaultAction") || !profile["defaultAction"].is_string())
    return make_error("seccomp profile: no string defaultAction");
  if (!profile.contains("syscalls") || !profile["syscalls"].is_array())
    return make_error("seccomp profile: no syscalls list");
  auto native = native_arches().find(t.go_arch);
  if (native == native_arches().end())
    return make_error("seccomp profile: unknown architecture " + t.go_arch);

  json out = {{"defaultAction", profile["defaultAction"]}};
  if (profile.contains("defaultErrnoRet") && profile["defaultErrnoRet"].is_number_unsigned())
    out["defaultErrnoRet"] = profile["defaultErrnoRet"];
  json arches = json::array();
  for (const auto& entry : profile.value("archMap", json::array())) {
    if (entry.value("architecture", "") != native->second) continue;
    arches.push_back(native->second);
    for (const auto& sub : entry.value("subArchitectures", json::array())) arches.push_back(sub);
  }
  if (arches.empty()) return make_error("seccomp profile: archMap has no entry for " + native->second);
  out["architectures"] = arches;

  json rules = json::array();
  for (std::size_t i = 0; i < profile["syscalls"].size(); ++i) {
    const json& r = profile["syscalls"][i];
    std::string where = "seccomp profile: syscalls[" + std::to_string(i) + "]";
    if (!r.is_object() || !r.contains("action") || !r["action"].is_string())
      return make_error(where + ": no string action");
    json names = r.contains("names") ? r["names"] : (r.contains("name") ? json::array({r["name"]}) : json());
    if (!names.is_array() || names.empty()) return make_error(where + ": no names");
    if (!applies(r, t)) continue;
    json rule = {{"names", names}, {"action", r["action"]}};
    if (r.contains("errnoRet") && r["errnoRet"].is_number_unsigned()) rule["errnoRet"] = r["errnoRet"];
    if (r.contains("args") && r["args"].is_array() && !r["args"].empty()) {
      json args = json::array();
      for (const auto& a : r["args"]) {
        if (!a.is_object() || !a.contains("index") || !a.contains("value") || !a.contains("op"))
          return make_error(where + ": an argument condition lacks index, value or op");
        args.push_back({{"index", a["index"]},
                        {"value", a["value"]},
                        {"valueTwo", a.value("valueTwo", 0)},
                        {"op", a["op"]}});
      }
      rule["args"] = args;
    }
    rules.push_back(rule);
  }
  gate_namespaces_on_sys_admin(rules, t);
  out["syscalls"] = rules;
  return out;
}

Expected<json> load_default_seccomp(const std::string& path, const SeccompTarget& target) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return make_error("cannot read the default seccomp profile " + path +
                      " (install it: apt-get install golang-github-containers-common)");
  std::string text(4 << 20, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (!in.eof()) return make_error(path + ": larger than 4 MiB, refusing to read it");
  json profile = json::parse(text, nullptr, false);
  if (profile.is_discarded()) return make_error(path + ": not valid JSON");
  auto converted = convert_seccomp_profile(profile, target);
  if (!converted) return make_error(path + ": " + converted.error().message);
  return converted;
}

}  // namespace isoharness::deploy::local
