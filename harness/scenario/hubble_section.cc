// The deployment profile's `hubble:` section (where the drop point's flows come from) and
// `node_image:` section (the runtime stack the nodes ship, with accepted_runtime_escapes and
// runsc_max_age_days), docs/CONTRACTS.md §4.6 and §4.7. Every
// value is checked here: the command is an argv of plain words, run without a shell; the
// file is an absolute path; every bound has a range.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>

#include "harness/scenario/profile_sections.h"

namespace isoharness::scenario::detail {
namespace {

using nlohmann::json;

struct SectionReader {
  const YamlDocument& doc;
  std::vector<Diagnostic>& errors;
  std::string section;

  void error(const std::string& key, const std::string& message) const {
    errors.push_back(doc.source.diagnostic(key.empty() ? "/" + section : pointer_join("/" + section, key), "",
                                           section + (key.empty() ? "" : "." + key) + " " + message));
  }
  template <typename T>
  void bounded(const json& s, const std::string& key, long long low, long long high, T& out) const {
    if (!s.contains(key)) return;
    if (!s[key].is_number_integer() || s[key].get<long long>() < low || s[key].get<long long>() > high)
      return error(key, "must be a whole number from " + std::to_string(low) + " to " + std::to_string(high));
    out = static_cast<T>(s[key].get<long long>());
  }
  void unknown_keys(const json& s, const std::vector<std::string_view>& known) const {
    const std::string list = fmt::format("{}", fmt::join(known, ", "));
    for (const auto& [key, value] : s.items())
      if (std::find(known.begin(), known.end(), key) == known.end())
        error("", "has an unknown key '" + key + "' (known: " + list + ")");
  }
};

// A word of an argv: non-empty, at most 512 bytes, no control characters.
bool argv_word(const json& w) {
  if (!w.is_string()) return false;
  const auto& s = w.get_ref<const std::string&>();
  return !s.empty() && s.size() <= 512 &&
         std::none_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
}

void read_hubble_source(const SectionReader& r, const json& h, HubbleSettings& out) {
  if (h.contains("command") == h.contains("file"))
    return r.error("", "needs exactly one of command (an argv list) and file (an absolute path)");
  if (h.contains("command")) {
    const json& c = h["command"];
    const bool ok =
        c.is_array() && !c.empty() && c.size() <= 64 && std::all_of(c.begin(), c.end(), argv_word);
    if (!ok)
      return r.error(
          "command",
          "must be a list of 1 to 64 words (the program first), e.g. [hubble, observe, --output, json]");
    for (const auto& w : c) out.command.push_back(w.get<std::string>());
    return;
  }
  const json& f = h["file"];
  if (!f.is_string() || f.get<std::string>().empty() || f.get<std::string>().front() != '/')
    return r.error("file", "must be an absolute path to exported flows (JSON Lines)");
  out.file = f.get<std::string>();
}

// A version word: letters, digits and + . ~ - :, 1 to 64 characters.
bool version_word(const json& v) {
  if (!v.is_string()) return false;
  const auto& s = v.get_ref<const std::string&>();
  return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '+' ||
           c == '.' || c == '~' || c == '-' || c == ':';
  });
}

}  // namespace

void read_hubble_section(const YamlDocument& doc, DeploymentProfile& profile,
                         std::vector<Diagnostic>& errors) {
  const json& v = doc.value;
  if (!v.contains("hubble")) return;
  const SectionReader r{doc, errors, "hubble"};
  const json& h = v["hubble"];
  if (!h.is_object()) return r.error("", "must be a mapping (command or file; timeout_s, max_bytes, ...)");
  r.unknown_keys(h, {"command", "file", "timeout_s", "max_bytes", "max_lines", "lead_s"});
  HubbleSettings out;
  read_hubble_source(r, h, out);
  r.bounded(h, "timeout_s", 1, 600, out.timeout_s);
  r.bounded(h, "max_bytes", 4096, 1LL << 30, out.max_bytes);
  r.bounded(h, "max_lines", 1, 10000000, out.max_lines);
  r.bounded(h, "lead_s", 0, 3600, out.lead_s);
  profile.hubble = out;
}

// One optional `<component>_version` with its `<component>_package`; a package without a
// version is refused.
void read_stack_version(const SectionReader& r, const json& n, const std::string& component,
                        std::string& version, std::string& package) {
  const std::string vk = component + "_version", pk = component + "_package";
  // YAML reads 1.28 as a number (and 1.10 as 1.1): a version must be a string, quoted if need be.
  if (n.contains(vk) && n[vk].is_number())
    r.error(vk, "must be quoted (\"" + n[vk].dump() + "\"): YAML reads an unquoted " + n[vk].dump() +
                    " as a number, and 1.10 would become 1.1");
  else if (n.contains(vk) && !version_word(n[vk]))
    r.error(vk, "must be the " + component + " version the image ships (letters, digits, + . ~ - :)");
  else if (n.contains(vk))
    version = n[vk].get<std::string>();
  if (n.contains(pk) && !version_word(n[pk]))
    r.error(pk, "must be a package version (letters, digits, + . ~ - :)");
  else if (n.contains(pk) && !n.contains(vk))
    r.error(pk, "needs " + vk + " beside it");
  else if (n.contains(pk))
    package = n[pk].get<std::string>();
}

void read_node_image_section(const YamlDocument& doc, DeploymentProfile& profile,
                             std::vector<Diagnostic>& errors) {
  const json& v = doc.value;
  if (!v.contains("node_image")) return;
  const SectionReader r{doc, errors, "node_image"};
  const json& n = v["node_image"];
  if (!n.is_object()) return r.error("", "must be a mapping (name, runc_version or crun_version, ...)");
  r.unknown_keys(n, {"name", "runc_version", "runc_package", "containerd_version", "containerd_package",
                     "crun_version", "crun_package", "runsc_version", "runsc_package",
                     "nvidia_container_toolkit_version", "nvidia_container_toolkit_package"});
  NodeImageSettings out;
  if (!n.contains("name") || !n["name"].is_string() || n["name"].get<std::string>().empty() ||
      n["name"].get<std::string>().size() > 256)
    r.error("name", "is required: the image the nodes run (at most 256 characters)");
  else
    out.name = n["name"].get<std::string>();
  if (!n.contains("runc_version") && !n.contains("crun_version"))
    r.error("runc_version", "is required unless crun_version names the nodes' OCI runtime");
  read_stack_version(r, n, "runc", out.runc_version, out.runc_package);
  read_stack_version(r, n, "containerd", out.containerd_version, out.containerd_package);
  read_stack_version(r, n, "crun", out.crun_version, out.crun_package);
  read_stack_version(r, n, "runsc", out.runsc_version, out.runsc_package);
  read_stack_version(r, n, "nvidia_container_toolkit", out.nvidia_container_toolkit_version,
                     out.nvidia_container_toolkit_package);
  profile.node_image = out;
}

// accepted_runtime_escapes: [{component, cve, reason}], each a component of the stack, a
// CVE name and a reason of its own.
void read_accepted_escapes(const YamlDocument& doc, DeploymentProfile& profile,
                           std::vector<Diagnostic>& errors) {
  const json& v = doc.value;
  if (v.contains("runsc_max_age_days")) {
    const SectionReader top{doc, errors, "runsc_max_age_days"};
    const json& d = v["runsc_max_age_days"];
    if (!d.is_number_integer() || d.get<long long>() < 1 || d.get<long long>() > 36500)
      top.error("", "must be a whole number of days from 1 to 36500");
    else
      profile.runsc_max_age_days = d.get<int>();
  }
  if (!v.contains("accepted_runtime_escapes")) return;
  const SectionReader r{doc, errors, "accepted_runtime_escapes"};
  const json& list = v["accepted_runtime_escapes"];
  if (!list.is_array()) return r.error("", "must be a list of {component, cve, reason}");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& e = list[i];
    const std::string at = std::to_string(i);
    const bool cve_ok = e.is_object() && e.contains("cve") && e["cve"].is_string() &&
                        e["cve"].get<std::string>().starts_with("CVE-") &&
                        e["cve"].get<std::string>().size() <= 32;
    const bool reason_ok = e.is_object() && e.contains("reason") && e["reason"].is_string() &&
                           !e["reason"].get<std::string>().empty() &&
                           e["reason"].get<std::string>().size() <= 512;
    const bool component_ok =
        e.is_object() && e.contains("component") && e["component"].is_string() &&
        std::any_of(std::begin(kRuntimeStackComponents), std::end(kRuntimeStackComponents),
                    [&](const char* c) { return e["component"].get<std::string>() == c; });
    if (!component_ok)
      r.error(at, "needs component: one of containerd, runc, crun, runsc, nvidia-container-toolkit");
    if (!cve_ok) r.error(at, "needs cve: a CVE name (CVE-YYYY-NNNN)");
    if (!reason_ok) r.error(at, "needs reason: why the deployment runs open to it (1 to 512 characters)");
    if (cve_ok && reason_ok && component_ok)
      profile.accepted_runtime_escapes.push_back(
          {e["cve"].get<std::string>(), e["reason"].get<std::string>(), e["component"].get<std::string>()});
  }
}

// accepted_risks: [{check, reason}], each a check accepted_risk_checks() names, once, with a
// reason of its own.
void read_accepted_risks(const YamlDocument& doc, DeploymentProfile& profile,
                         std::vector<Diagnostic>& errors) {
  const json& v = doc.value;
  if (!v.contains("accepted_risks")) return;
  const SectionReader r{doc, errors, "accepted_risks"};
  const json& list = v["accepted_risks"];
  if (!list.is_array()) return r.error("", "must be a list of {check, reason}");
  const auto& known = accepted_risk_checks();
  const std::string names = fmt::format("{}", fmt::join(known, ", "));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& e = list[i];
    const std::string at = std::to_string(i);
    if (!e.is_object()) {
      r.error(at, "must be a mapping {check, reason}");
      continue;
    }
    r.unknown_keys(e, {"check", "reason"});
    const std::string check =
        e.contains("check") && e["check"].is_string() ? e["check"].get<std::string>() : "";
    const bool check_ok = std::find(known.begin(), known.end(), check) != known.end();
    const bool reason_ok = e.contains("reason") && e["reason"].is_string() &&
                           !e["reason"].get<std::string>().empty() &&
                           e["reason"].get<std::string>().size() <= 512;
    const bool twice = check_ok && std::any_of(profile.accepted_risks.begin(), profile.accepted_risks.end(),
                                               [&](const AcceptedRisk& a) { return a.check == check; });
    if (!check_ok)
      r.error(at, (check.empty() ? std::string("needs check") : "names no known check '" + check + "'") +
                      " (one of: " + names + ")");
    if (!reason_ok) r.error(at, "needs reason: why the deployment runs with it (1 to 512 characters)");
    if (twice) r.error(at, "accepts " + check + " a second time");
    if (check_ok && reason_ok && !twice)
      profile.accepted_risks.push_back({check, e["reason"].get<std::string>()});
  }
}

}  // namespace isoharness::scenario::detail
