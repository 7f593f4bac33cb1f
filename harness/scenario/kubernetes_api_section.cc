// The deployment profile's `kubernetes_api:` section (docs/CONTRACTS.md §4.9): where the
// Kubernetes API's objects of each eval come from. Every value is checked here: a command
// is an argv of plain words run without a shell, whose only placeholders are {namespace}
// and {eval_set_id}; a file is an absolute path; every bound has a range.
#include <algorithm>
#include <array>

#include "harness/scenario/profile_sections.h"

namespace isoharness::scenario::detail {
namespace {

using nlohmann::json;

struct ApiReader {
  const YamlDocument& doc;
  std::vector<Diagnostic>& errors;

  // `key` is a dotted path below kubernetes_api: ("pods.command" is /kubernetes_api/pods/command).
  void error(const std::string& key, const std::string& message) const {
    std::string pointer = "/kubernetes_api";
    for (std::size_t start = 0; !key.empty() && start <= key.size();) {
      const auto dot = std::min(key.find('.', start), key.size());
      pointer = pointer_join(pointer, std::string_view(key).substr(start, dot - start));
      start = dot + 1;
    }
    errors.push_back(doc.source.diagnostic(
        pointer, "", "kubernetes_api" + (key.empty() ? "" : "." + key) + " " + message));
  }
};

// The braces of a word are only the two placeholders.
bool placeholders_known(std::string_view w) {
  for (std::size_t at = w.find('{'); at != std::string_view::npos; at = w.find('{', at + 1)) {
    const auto rest = w.substr(at);
    if (!rest.starts_with("{namespace}") && !rest.starts_with("{eval_set_id}")) return false;
  }
  const auto closes = std::count(w.begin(), w.end(), '}');
  const auto opens = std::count(w.begin(), w.end(), '{');
  return closes == opens;
}

// A word of an argv: non-empty, at most 512 bytes, no control characters, known placeholders.
bool argv_word(const json& w) {
  if (!w.is_string()) return false;
  const auto& s = w.get_ref<const std::string&>();
  return !s.empty() && s.size() <= 512 && placeholders_known(s) &&
         std::none_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
}

std::optional<KubeApiSource> read_source(const ApiReader& r, const json& s, const std::string& key) {
  if (!s.is_object() || s.contains("command") == s.contains("file") || s.size() != 1) {
    r.error(key, "must be a mapping with exactly one of command (an argv list) and file (an absolute path)");
    return std::nullopt;
  }
  KubeApiSource out;
  if (s.contains("command")) {
    const json& c = s["command"];
    if (!c.is_array() || c.empty() || c.size() > 64 || !std::all_of(c.begin(), c.end(), argv_word)) {
      r.error(
          key + ".command",
          "must be a list of 1 to 64 words (the program first; {namespace} and {eval_set_id} are the only "
          "placeholders), e.g. [kubectl, get, pods, -n, \"{namespace}\", -o, json]");
      return std::nullopt;
    }
    for (const auto& w : c) out.command.push_back(w.get<std::string>());
    return out;
  }
  const json& f = s["file"];
  if (!argv_word(f) || f.get<std::string>().front() != '/') {
    r.error(key + ".file",
            "must be an absolute path ({namespace} and {eval_set_id} are the only placeholders)");
    return std::nullopt;
  }
  out.file = f.get<std::string>();
  return out;
}

void read_bounds(const ApiReader& r, const json& a, KubernetesApiSettings& out) {
  if (a.contains("timeout_s")) {
    const json& t = a["timeout_s"];
    if (!t.is_number_integer() || t.get<long long>() < 1 || t.get<long long>() > 600)
      r.error("timeout_s", "must be a whole number of seconds from 1 to 600");
    else
      out.timeout_s = t.get<int>();
  }
  if (a.contains("max_bytes")) {
    const json& m = a["max_bytes"];
    if (!m.is_number_integer() || m.get<long long>() < 4096 || m.get<long long>() > (256LL << 20))
      r.error("max_bytes", "must be a whole number from 4096 to 268435456");
    else
      out.max_bytes = m.get<std::size_t>();
  }
}

}  // namespace

void read_kubernetes_api_section(const YamlDocument& doc, DeploymentProfile& profile,
                                 std::vector<Diagnostic>& errors) {
  const json& v = doc.value;
  if (!v.contains("kubernetes_api")) return;
  const ApiReader r{doc, errors};
  const json& a = v["kubernetes_api"];
  if (a.is_string() && a.get<std::string>() == "none") {
    profile.kubernetes_api_none = true;
    return;
  }
  if (!a.is_object())
    return r.error("",
                   "must be a mapping (pods, runtime_classes, network_policies, timeout_s, max_bytes) or the "
                   "word none");
  static const std::array<std::string_view, 5> known{"pods", "runtime_classes", "network_policies",
                                                     "timeout_s", "max_bytes"};
  for (const auto& [key, value] : a.items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      r.error("", "has an unknown key '" + key +
                      "' (known: pods, runtime_classes, network_policies, timeout_s, max_bytes)");
  KubernetesApiSettings out;
  bool ok = true;
  if (!a.contains("pods")) {
    r.error("", "needs pods: where the eval's Pods come from (command or file)");
    ok = false;
  } else if (auto s = read_source(r, a["pods"], "pods")) {
    out.pods = *s;
  } else {
    ok = false;
  }
  if (a.contains("runtime_classes"))
    out.runtime_classes = read_source(r, a["runtime_classes"], "runtime_classes");
  if (a.contains("network_policies"))
    out.network_policies = read_source(r, a["network_policies"], "network_policies");
  read_bounds(r, a, out);
  if (ok) profile.kubernetes_api = out;
}

}  // namespace isoharness::scenario::detail
