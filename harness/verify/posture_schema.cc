// The posture document's schema (docs/CONTRACTS.md §3), checked before any control is
// judged. The document comes from inside the sandbox; verify's accessors already treat a
// missing or mistyped value as "not observed" (a failing check), so this check is about
// documents that are well-formed JSON yet cannot be an honest isoprobe report: unknown
// top-level keys (e.g. a "checks" or "verdict" of the sandbox's own), an observation twice
// (verify would read the first), unknown names or statuses, values of the wrong shape,
// evidence over isoprobe's own bound, and values that contradict themselves (a capability
// mask and its names disagreeing, CapEff outside CapPrm, "gvisor" without the signals it
// is derived from). A document with any such problem gets no passing check at all
// (verify.cc).
#include <cstdint>
#include <map>
#include <set>

#include "harness/common/capability_table.h"
#include "harness/verify/checks_internal.h"

namespace isoharness::verify {

namespace {

inline constexpr const char* kPostureSchema = "isoharness.posture/v1";
inline constexpr std::size_t kMaxObservations = 64;
inline constexpr std::size_t kMaxEvidenceBytes = 4096;  // isoprobe's kMaxEvidence

enum class Kind { boolean, integer, string, strings, object, array, hex16 };

// Keys verify reads, per observation, with the type each must have when present.
const std::map<std::string, std::vector<std::pair<const char*, Kind>>>& value_shapes() {
  static const std::map<std::string, std::vector<std::pair<const char*, Kind>>> shapes = {
      {"kernel",
       {{"sysname", Kind::string},
        {"release", Kind::string},
        {"version", Kind::string},
        {"machine", Kind::string},
        {"gvisor", Kind::boolean},
        {"gvisor_signals", Kind::strings}}},
      {"capabilities",
       {{"inh", Kind::hex16},
        {"prm", Kind::hex16},
        {"eff", Kind::hex16},
        {"bnd", Kind::hex16},
        {"amb", Kind::hex16},
        {"eff_names", Kind::strings},
        {"bnd_names", Kind::strings}}},
      {"no_new_privs", {}},
      {"seccomp", {{"status_mode", Kind::integer}, {"prctl_mode", Kind::integer}}},
      {"identity",
       {{"uid", Kind::integer},
        {"euid", Kind::integer},
        {"gid", Kind::integer},
        {"egid", Kind::integer},
        {"uid_map", Kind::array}}},
      {"userns", {{"created", Kind::boolean}}},
      {"mount", {{"tmpfs_mounted", Kind::boolean}}},
      {"kallsyms", {{"state", Kind::string}, {"lines", Kind::integer}}},
      {"debugfs", {{"present", Kind::boolean}, {"entries", Kind::integer}}},
      {"sysrq", {{"present", Kind::boolean}, {"opens_for_write", Kind::boolean}}},
      {"devices", {{"extra", Kind::strings}}},
      {"runtime_sockets", {{"found", Kind::strings}}},
      {"kubernetes", {{"service_account_token", Kind::boolean}, {"env", Kind::strings}}},
      {"processes", {{"visible", Kind::integer}, {"pid1", Kind::string}}},
      {"network", {{"interfaces", Kind::strings}, {"hostname", Kind::string}}},
      {"addresses", {{"ipv4", Kind::strings}, {"ipv6", Kind::strings}}},
      {"filesystem",
       {{"root_writable", Kind::boolean},
        {"paths", Kind::object},
        {"readonly_mounts", Kind::strings},
        {"cgroup_writable", Kind::boolean}}},
      {"boot_id", {{"boot_id", Kind::string}}},
      {"egress", {{"targets", Kind::array}, {"nonce", Kind::string}, {"sockets", Kind::object}}},
      {"escape_mounts",
       {{"host_mounts", Kind::array},
        {"proc_sys_read_only", Kind::boolean},
        {"cgroup_writable_mounts", Kind::strings},
        {"release_agent_visible", Kind::boolean},
        {"release_agent_writable", Kind::boolean}}},
      {"bpf",
       {{"unprivileged_bpf_disabled", Kind::integer},
        {"map_created", Kind::boolean},
        {"map_errno", Kind::integer},
        {"route_localnet", Kind::integer}}},
  };
  return shapes;
}

bool is_hex16(const nlohmann::json& v) {
  if (!v.is_string()) return false;
  const auto& s = v.get_ref<const std::string&>();
  return s.size() == 16 && s.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
}

bool has_kind(const nlohmann::json& v, Kind kind) {
  switch (kind) {
    case Kind::boolean:
      return v.is_boolean();
    case Kind::integer:
      return v.is_number_integer();
    case Kind::string:
      return v.is_string();
    case Kind::object:
      return v.is_object();
    case Kind::array:
      return v.is_array();
    case Kind::hex16:
      return is_hex16(v);
    case Kind::strings:
      if (!v.is_array()) return false;
      for (const auto& e : v)
        if (!e.is_string()) return false;
      return true;
  }
  return false;
}

std::uint64_t hex_value(const nlohmann::json& v) {
  return std::stoull(v.get<std::string>(), nullptr, 16);
}

// Known capability names of the bits in mask, and the known names listed.
std::set<std::string> known_names(std::uint64_t mask) {
  std::set<std::string> out;
  for (std::size_t i = 0; i < kCapabilityNames.size(); ++i)
    if (mask & (1ULL << i)) out.emplace(kCapabilityNames[i]);
  return out;
}

std::set<std::string> known_names(const nlohmann::json& names) {
  std::set<std::string> out;
  for (const auto& n : names)
    if (detail::capability_bit(n.get<std::string>()) >= 0) out.insert(n.get<std::string>());
  return out;
}

void check_contradictions(const std::string& name, const nlohmann::json& v,
                          std::vector<std::string>& problems) {
  if (name == "capabilities") {
    if (is_hex16(v.value("eff", nlohmann::json())) && is_hex16(v.value("prm", nlohmann::json()))) {
      const auto eff = hex_value(v["eff"]), prm = hex_value(v["prm"]);
      if (eff & ~prm) problems.emplace_back("capabilities: eff holds bits that prm does not (impossible)");
      if (v.contains("eff_names") && has_kind(v["eff_names"], Kind::strings) &&
          known_names(eff) != known_names(v["eff_names"]))
        problems.emplace_back("capabilities: eff_names do not match eff");
    }
    if (is_hex16(v.value("bnd", nlohmann::json())) && v.contains("bnd_names") &&
        has_kind(v["bnd_names"], Kind::strings) &&
        known_names(hex_value(v["bnd"])) != known_names(v["bnd_names"]))
      problems.emplace_back("capabilities: bnd_names do not match bnd");
  } else if (name == "kernel") {
    if (v.contains("gvisor") && v["gvisor"] == true &&
        (!v.contains("gvisor_signals") || !v["gvisor_signals"].is_array() || v["gvisor_signals"].size() < 2))
      problems.emplace_back("kernel: gvisor is true without the signals it is derived from");
  }
}

void check_observation(const nlohmann::json& o, std::size_t index, std::set<std::string>& seen,
                       std::vector<std::string>& problems) {
  const std::string at = "observations[" + std::to_string(index) + "]";
  if (!o.is_object() || !o.contains("name") || !o["name"].is_string()) {
    problems.push_back(at + ": not an object with a name");
    return;
  }
  const std::string name = o["name"].get<std::string>();
  const auto shape = value_shapes().find(name);
  if (shape == value_shapes().end()) {
    problems.push_back(at + ": unknown observation '" + detail::bounded(name, 64) + "'");
    return;
  }
  if (!seen.insert(name).second) problems.push_back(at + ": a second '" + name + "' observation");
  const std::string status =
      o.value("status", nlohmann::json()).is_string() ? o["status"].get<std::string>() : "";
  if (status != "ok" && status != "error" && status != "skipped")
    problems.push_back(name + ": status must be ok, error or skipped");
  if (o.contains("errno") && !o["errno"].is_number_integer())
    problems.push_back(name + ": errno is not an integer");
  if (o.contains("evidence") &&
      (!o["evidence"].is_string() || o["evidence"].get_ref<const std::string&>().size() > kMaxEvidenceBytes))
    problems.push_back(name + ": evidence is not a string of at most 4096 bytes");
  if (status != "ok") return;
  const auto& v = o.value("value", nlohmann::json());
  if (name == "no_new_privs") {
    if (!v.is_boolean()) problems.emplace_back("no_new_privs: value is not a boolean");
    return;
  }
  if (!v.is_object()) {
    problems.push_back(name + ": value is not an object");
    return;
  }
  for (const auto& [key, kind] : shape->second) {
    if (v.contains(key) && !v[key].is_null() && !has_kind(v[key], kind))
      problems.push_back(name + ": '" + key + "' has the wrong type");
  }
  check_contradictions(name, v, problems);
}

}  // namespace

Expected<nlohmann::json> parse_posture(std::string_view text) {
  bool too_deep = false;
  auto doc = nlohmann::json::parse(
      text,
      [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
        if (depth > kMaxPostureDepth) too_deep = true;
        return !too_deep;
      },
      false);
  if (too_deep) return Error{"JSON nested deeper than " + std::to_string(kMaxPostureDepth) + " levels"};
  if (doc.is_discarded()) return Error{"not a JSON document (or not UTF-8)"};
  if (!doc.is_object()) return Error{"JSON, but not an object"};
  return doc;
}

std::vector<std::string> posture_schema_problems(const nlohmann::json& posture) {
  std::vector<std::string> problems;
  if (!posture.is_object()) return {"the posture document is not a JSON object"};
  for (const auto& [key, value] : posture.items()) {
    if (key != "schema" && key != "context" && key != "observations")
      problems.push_back("unknown top-level key '" + detail::bounded(key, 64) + "'");
  }
  if (posture.value("schema", nlohmann::json()) != kPostureSchema)
    problems.push_back(std::string("schema is not ") + kPostureSchema);
  if (posture.contains("context") && !posture["context"].is_object())
    problems.emplace_back("context is not an object");
  if (!posture.contains("observations") || !posture["observations"].is_array() ||
      posture["observations"].size() > kMaxObservations) {
    problems.push_back("observations is not a list of at most " + std::to_string(kMaxObservations) +
                       " entries");
    return problems;
  }
  std::set<std::string> seen;
  const auto& obs = posture["observations"];
  for (std::size_t i = 0; i < obs.size() && problems.size() < 20; ++i)
    check_observation(obs[i], i, seen, problems);
  return problems;
}

std::vector<std::string> detail::posture_observation_names() {
  std::vector<std::string> out;
  for (const auto& [name, shape] : value_shapes()) out.push_back(name);
  return out;
}

}  // namespace isoharness::verify
