#include "harness/verify/verify.h"

#include <algorithm>

#include "harness/common/capability_table.h"
#include "harness/common/json_read.h"
#include "harness/verify/checks_internal.h"

namespace isoharness::verify {
namespace detail {

const nlohmann::json* observation(const nlohmann::json& posture, const std::string& name) {
  if (!posture.is_object()) return nullptr;
  auto it = posture.find("observations");
  if (it == posture.end() || !it->is_array()) return nullptr;
  for (const auto& o : *it) {
    if (!o.is_object()) continue;
    auto n = o.find("name");
    if (n == o.end() || !n->is_string() || n->get<std::string>() != name) continue;
    auto s = o.find("status");
    if (s == o.end() || !s->is_string() || s->get<std::string>() != "ok") return nullptr;
    auto v = o.find("value");
    return v == o.end() ? nullptr : &*v;
  }
  return nullptr;
}

namespace {
const nlohmann::json* raw_observation(const nlohmann::json& posture, const std::string& name) {
  if (!posture.is_object()) return nullptr;
  auto it = posture.find("observations");
  if (it == posture.end() || !it->is_array()) return nullptr;
  for (const auto& o : *it) {
    if (common::json_string(o, "name") == name) return &o;
  }
  return nullptr;
}
}  // namespace

std::string observation_status(const nlohmann::json& posture, const std::string& name) {
  const auto* o = raw_observation(posture, name);
  if (!o) return "missing";
  auto s = o->find("status");
  return (s != o->end() && s->is_string()) ? s->get<std::string>() : "malformed";
}

std::string observation_evidence(const nlohmann::json& posture, const std::string& name) {
  const auto* o = raw_observation(posture, name);
  if (!o) return "";
  auto e = o->find("evidence");
  return (e != o->end() && e->is_string()) ? bounded(e->get<std::string>()) : "";
}

std::optional<bool> get_bool(const nlohmann::json* obj, const char* key) {
  if (!obj) return std::nullopt;
  if (obj->is_boolean() && key == nullptr) return obj->get<bool>();
  if (!obj->is_object() || !key) return std::nullopt;
  auto it = obj->find(key);
  if (it == obj->end() || !it->is_boolean()) return std::nullopt;
  return it->get<bool>();
}

std::optional<long long> get_int(const nlohmann::json* obj, const char* key) {
  if (!obj || !obj->is_object()) return std::nullopt;
  auto it = obj->find(key);
  if (it == obj->end() || !it->is_number_integer()) return std::nullopt;
  return it->get<long long>();
}

std::optional<std::string> get_string(const nlohmann::json* obj, const char* key) {
  if (!obj || !obj->is_object()) return std::nullopt;
  auto it = obj->find(key);
  if (it == obj->end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::vector<std::string> get_strings(const nlohmann::json* obj, const char* key) {
  std::vector<std::string> out;
  if (!obj || !obj->is_object()) return out;
  auto it = obj->find(key);
  if (it == obj->end() || !it->is_array()) return out;
  for (const auto& v : *it)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::string bounded(std::string text, std::size_t max) {
  if (text.size() > max) {
    // Cut before a UTF-8 continuation byte, never inside a character.
    while (max > 0 && (static_cast<unsigned char>(text[max]) & 0xC0) == 0x80) --max;
    text.resize(max);
    text += "…[truncated]";
  }
  return text;
}

CheckResult make(const std::string& control, bool pass, std::string expected, std::string observed,
                 std::string reason, std::string evidence) {
  return CheckResult{control,           pass_or_fail(pass),          std::move(expected), std::move(observed),
                     std::move(reason), bounded(std::move(evidence))};
}

CheckResult not_applicable(const std::string& control, std::string reason, std::string observed) {
  return CheckResult{control, CheckStatus::na, "", std::move(observed), std::move(reason), ""};
}

CheckResult missing(const std::string& control, const nlohmann::json& posture, const std::string& obs,
                    const std::string& expected) {
  std::string status = observation_status(posture, obs);
  return make(control, false, expected, "no observation (" + status + ")",
              control + ": the probe could not observe '" + obs + "' (" + status +
                  "); an unverifiable control is not a pass",
              observation_evidence(posture, obs));
}

const nlohmann::json* planned(const VerifyInput& in, const char* key) {
  if (!in.expect.is_object()) return nullptr;
  auto it = in.expect.find(key);
  return it == in.expect.end() ? nullptr : &*it;
}

CheckResult unplanned(const std::string& control, const char* key) {
  return make(control, false, "a rule in the plan", "not judged",
              control + ": the plan's expect block has no '" + key + "', so nothing can be verified");
}

void judge_interface(const VerifyInput& in, const InterfaceState& seen, std::vector<CheckResult>& out) {
  const auto* accepted = planned(in, seen.control.c_str());
  if (!accepted || !accepted->is_array()) {
    out.push_back(unplanned(seen.control, seen.control.c_str()));
    return;
  }
  std::vector<std::string> states;
  for (const auto& s : *accepted)
    if (s.is_string()) states.push_back(s.get<std::string>());
  std::string expected;
  for (const auto& s : states) expected += (expected.empty() ? "" : " or ") + s;
  if (!seen.state) {
    out.push_back(missing(seen.control, in.posture, seen.observation, expected));
    return;
  }
  const bool pass = std::find(states.begin(), states.end(), *seen.state) != states.end();
  std::string reason;
  if (!pass) {
    reason =
        seen.control + ": " + seen.observed_text + " (" + *seen.state + "), which the plan does not accept";
  } else if (*seen.state == "emulated") {
    reason = "emulated: gVisor's own interface; it never reaches the host kernel";
  } else {
    reason = "as planned";
  }
  out.push_back(make(seen.control, pass, expected, seen.observed_text + " (" + *seen.state + ")", reason,
                     observation_evidence(in.posture, seen.observation)));
}

bool observed_gvisor(const nlohmann::json& posture) {
  return get_bool(observation(posture, "kernel"), "gvisor").value_or(false);
}

namespace {
constexpr const auto& kCapNames = kCapabilityNames;
}  // namespace

int capability_bit(const std::string& name) {
  for (std::size_t i = 0; i < kCapNames.size(); ++i)
    if (name == kCapNames[i]) return static_cast<int>(i);
  return -1;
}

std::string capability_names(unsigned long long mask) {
  std::string out;
  for (std::size_t i = 0; i < 64; ++i) {
    if (!(mask & (1ULL << i))) continue;
    if (!out.empty()) out += ",";
    out += i < kCapNames.size() ? std::string(kCapNames[i]) : "CAP_" + std::to_string(i);
  }
  return out.empty() ? "(none)" : out;
}

}  // namespace detail

namespace {

// Every check family with the plan keys it reads. A family sees only the keys it declares,
// so the list cannot claim less than the code reads; tests hold the union to exactly the
// keys the plan writes.
struct CheckFamily {
  void (*run)(const VerifyInput&, std::vector<CheckResult>&);
  std::vector<std::string> expect_keys;
};

const std::vector<CheckFamily>& check_families() {
  static const std::vector<CheckFamily> families = {
      {detail::check_kernel, {"kernel"}},
      {detail::check_privileges,
       {"kernel", "cap_eff", "cap_eff_default", "cap_eff_forbidden", "no_new_privs", "seccomp", "uid"}},
      {detail::check_filesystem, {"root_read_only", "root_writable", "writable_paths"}},
      {detail::check_emulated_interfaces, {"user_namespace", "mount", "sysrq", "kallsyms", "debugfs"}},
      {detail::check_host_reached, {}},
      {detail::check_egress, {"allow_domains", "allow_domains_ports", "allow_cidr", "egress_roles"}},
      {detail::check_raw_sockets, {"cap_eff", "cap_eff_default"}},
      {detail::check_escape_classes, {"host_mounts_allowed", "proc_sys", "cgroup_mounts", "bpf"}},
  };
  return families;
}

nlohmann::json only_keys(const nlohmann::json& expect, const std::vector<std::string>& keys) {
  nlohmann::json out = nlohmann::json::object();
  if (!expect.is_object()) return out;
  for (const auto& k : keys)
    if (auto it = expect.find(k); it != expect.end()) out[k] = *it;
  return out;
}

}  // namespace

std::vector<CheckResult> verify_sandbox(const VerifyInput& input) {
  std::vector<CheckResult> out;
  const auto problems = posture_schema_problems(input.posture);
  if (!problems.empty()) {
    std::string observed;
    for (const auto& p : problems) observed += (observed.empty() ? "" : "; ") + p;
    out.push_back(detail::make("posture_schema", false, "a posture document as isoprobe writes it", observed,
                               "posture_schema: the sandbox's posture document is off-schema or contradicts "
                               "itself, so nothing in it is trusted"));
  }
  for (const auto& family : check_families()) {
    const nlohmann::json expect = only_keys(input.expect, family.expect_keys);
    family.run(
        {expect, input.posture, input.host, input.targets, input.level, input.witness, input.witness_waived},
        out);
  }
  // Every check the sandbox's own report decided is judged by it; then the node's view.
  for (auto& c : out)
    if (c.judges.empty() && c.status != CheckStatus::na && c.control.rfind("egress:", 0) != 0)
      c.judges.push_back(Judge::posture);
  detail::apply_node_rule(input, out);
  // Every control is still judged (so the record shows what the document claimed), but
  // none of them passes on the word of an untrustworthy document.
  if (!problems.empty()) {
    for (auto& c : out) {
      if (c.status != CheckStatus::pass) continue;
      c.status = CheckStatus::fail;
      c.reason = untrusted_reason(c.control, "posture_schema");
    }
  }
  return out;
}

std::string untrusted_reason(const std::string& control, const std::string& because) {
  return control + ": claimed by a posture document that fails " + because + "; not trusted";
}

std::vector<std::string> expect_keys_read() {
  std::vector<std::string> keys;
  for (const auto& family : check_families())
    for (const auto& k : family.expect_keys)
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  return keys;
}

nlohmann::json to_json(const CheckResult& c) {
  nlohmann::json out = {{"control", c.control},   {"status", status_label(c.status)},
                        {"expected", c.expected}, {"observed", c.observed},
                        {"reason", c.reason},     {"evidence", c.evidence}};
  nlohmann::json judges = nlohmann::json::array();
  for (const auto j : c.judges) judges.push_back(judge_label(j));
  out["judges"] = std::move(judges);
  if (c.self_reported) out["self_reported"] = true;
  if (c.known_risk) out["known_risk"] = true;
  return out;
}

}  // namespace isoharness::verify
