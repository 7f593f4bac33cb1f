#include "harness/scenario/profile_sections.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <regex>
#include <string_view>

namespace isoharness::scenario::detail {
namespace {

using nlohmann::json;

struct Section {
  const YamlDocument& doc;
  std::string base;
  std::vector<Diagnostic>& errors;

  void error(const std::string& key, std::string message) const {
    errors.push_back(
        doc.source.diagnostic(key.empty() ? base : pointer_join(base, key), "", std::move(message)));
  }
  // A non-empty string at key (when present); false (with an error) otherwise.
  bool string_at(const json& v, const std::string& key, std::string& out) const {
    if (!v.contains(key)) return false;
    if (!v[key].is_string() || v[key].get<std::string>().empty()) {
      error(key, base.substr(1) + "." + key + " must be a non-empty string, not " + brief_json(v[key]));
      return false;
    }
    out = v[key].get<std::string>();
    return true;
  }
  void unknown_keys(const json& v, std::initializer_list<const char*> known) const {
    for (const auto& [key, value] : v.items()) {
      bool ok = false;
      for (const char* k : known) ok = ok || key == k;
      if (!ok)
        error(key, "unknown key '" + key + "' in " + base.substr(1) +
                       " (known: " + fmt::format("{}", fmt::join(known, ", ")) + ")");
    }
  }
};

// A whole number from low to high at key (when present), else an error naming the range.
void read_bounded_int(const Section& s, const json& v, const std::string& key, const std::string& what,
                      long low, long high, int& out) {
  if (!v.contains(key)) return;
  if (!v[key].is_number_integer() || v[key].get<long>() < low || v[key].get<long>() > high)
    s.error(key, s.base.substr(1) + "." + key + " must be " + what + " from " + std::to_string(low) + " to " +
                     std::to_string(high));
  else
    out = v[key].get<int>();
}

// "host:port" with a port from 1 to 65535; the host a name or an IPv4 address.
bool host_port(const std::string& s) {
  static const std::regex re("[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?:([0-9]{1,5})");
  std::smatch m;
  if (!std::regex_match(s, m, re)) return false;
  int port = std::stoi(m[2].str());
  return port >= 1 && port <= 65535;
}

// "type base64" (an OpenSSH public key line; a comment may follow).
bool key_line(const std::string& s) {
  static const std::regex re("(ssh-ed25519|ecdsa-sha2-nistp(256|384|521)|ssh-rsa) [A-Za-z0-9+/]+=*( .*)?");
  return std::regex_match(s, re);
}

// A Kubernetes label name or value: at most 63 characters of [-A-Za-z0-9_.], starting and
// ending with a letter or digit (a value may also be empty). Checked by hand: libstdc++'s
// std::regex recurses per character of a bounded repetition.
bool label_word(std::string_view w, bool may_be_empty) {
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (w.empty()) return may_be_empty;
  if (w.size() > 63 || !alnum(w.front()) || !alnum(w.back())) return false;
  return std::all_of(w.begin(), w.end(),
                     [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// A label key: an optional DNS prefix (at most 253 characters of [-a-z0-9.]) and '/', then a name.
bool label_key(std::string_view k) {
  const auto slash = k.find('/');
  if (slash == std::string_view::npos) return label_word(k, false);
  const std::string_view prefix = k.substr(0, slash);
  const bool prefix_ok =
      !prefix.empty() && prefix.size() <= 253 && std::all_of(prefix.begin(), prefix.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
      });
  return prefix_ok && label_word(k.substr(slash + 1), false);
}

// node_selector: Kubernetes label keys to label values, as the chart's nodeSelector takes them.
void read_node_selector(const json& v, const Section& s, NodeClassSettings& out) {
  if (!v.is_object()) return s.error("node_selector", "node_selector must map label keys to label values");
  for (const auto& [key, value] : v.items()) {
    if (!label_key(key) || !value.is_string() || !label_word(value.get_ref<const std::string&>(), true))
      s.error("node_selector",
              "node_selector: '" + key + "' must be a label key with a label value (string)");
    else
      out.node_selector[key] = value;
  }
}

// tolerations: Kubernetes tolerations, each a mapping of key, operator (Exists, Equal),
// value, effect (NoSchedule, PreferNoSchedule, NoExecute) and tolerationSeconds.
void read_tolerations(const json& v, const Section& s, NodeClassSettings& out) {
  static const std::array<const char*, 4> kStrings{"key", "operator", "value", "effect"};
  if (!v.is_array()) return s.error("tolerations", "tolerations must be a list of tolerations");
  for (const auto& t : v) {
    static const json kEmpty = json::object();
    bool ok = t.is_object() && !t.empty();
    const json& fields = ok ? t : kEmpty;  // a reference, never a temporary the loop outlives
    for (const auto& [key, value] : fields.items()) {
      const bool text = std::find(kStrings.begin(), kStrings.end(), key) != kStrings.end();
      ok = ok && ((text && value.is_string()) || (key == "tolerationSeconds" && value.is_number_integer()));
    }
    const std::string op = ok ? t.value("operator", "Equal") : "";
    const std::string effect = ok ? t.value("effect", "") : "";
    ok = ok && (op == "Equal" || op == "Exists") &&
         (effect.empty() || effect == "NoSchedule" || effect == "PreferNoSchedule" || effect == "NoExecute");
    if (!ok)
      s.error("tolerations", "tolerations: " + brief_json(t) +
                                 " is not a toleration (key, operator Exists|Equal, value, effect "
                                 "NoSchedule|PreferNoSchedule|NoExecute, tolerationSeconds)");
    else
      out.tolerations.push_back(t);
  }
}

}  // namespace

}  // namespace isoharness::scenario::detail

namespace isoharness::scenario {

bool config_override_reserved(std::string_view key) {
  return key == "tasks" || key == "isolation" || key == "limit" || key == "epochs" ||
         key == kSandboxPlacementKey;
}

}  // namespace isoharness::scenario

namespace isoharness::scenario::detail {
namespace {

// hawk.human_agent: {package, name, args}, the solver a --no-rewrite start names itself.
void read_human_agent(const YamlDocument& doc, const json& h, HawkSettings& out,
                      std::vector<Diagnostic>& errors) {
  if (!h.contains("human_agent")) return;
  Section a{doc, "/hawk/human_agent", errors};
  const json& v = h["human_agent"];
  if (!v.is_object()) {
    a.error("", "hawk.human_agent must be a mapping {package, name, args}");
    return;
  }
  a.unknown_keys(v, {"package", "name", "args"});
  HumanAgentSolver solver;
  const bool has_package = a.string_at(v, "package", solver.package);
  const bool has_name = a.string_at(v, "name", solver.name);
  const bool named = has_package && has_name;
  if (!named && (!v.contains("package") || !v.contains("name")))
    a.error("", "hawk.human_agent needs package and name (the solver's package and registered name)");
  static const std::regex name_re("[A-Za-z_][A-Za-z0-9_./-]{0,127}");
  if (!solver.name.empty() && !std::regex_match(solver.name, name_re))
    a.error("name", "hawk.human_agent.name '" + solver.name + "' is not a solver name");
  if (v.contains("args") && !v["args"].is_object())
    a.error("args", "hawk.human_agent.args must be a mapping");
  if (v.contains("args") && v["args"].is_object()) solver.args = v["args"];
  if (named) out.human_agent = std::move(solver);
}

// The waits for a sandbox pod held short of running, and the rule that a start with
// --no-rewrite names its own human-agent solver.
void read_hawk_holds(const YamlDocument& doc, const json& h, HawkSettings& out,
                     std::vector<Diagnostic>& errors) {
  Section s{doc, "/hawk", errors};
  read_bounded_int(s, h, "unschedulable_grace_s", "a whole number of seconds", 0, 86400,
                   out.unschedulable_grace_s);
  read_bounded_int(s, h, "stuck_grace_s", "a whole number of seconds", 0, 86400, out.stuck_grace_s);
  read_bounded_int(s, h, "crash_loop_restarts", "a whole number of restarts", 1, 100,
                   out.crash_loop_restarts);
  read_human_agent(doc, h, out, errors);
  const bool no_rewrite =
      std::find(out.start_args.begin(), out.start_args.end(), "--no-rewrite") != out.start_args.end();
  if (no_rewrite && !out.human_agent && !h.contains("human_agent"))
    s.error("start_args",
            "hawk.start_args has --no-rewrite, so the platform keeps the submitted solvers as they are, and "
            "the one-item config names none: name the human-agent solver in hawk.human_agent "
            "{package, name, args}, or drop --no-rewrite to let the platform put in the operator's");
}

}  // namespace

void read_hawk_section(const YamlDocument& doc, DeploymentProfile& profile, std::vector<Diagnostic>& errors) {
  const json& v = doc.value;
  if (!v.contains("hawk")) {
    if (profile.backend == BackendKind::hawk)
      errors.push_back(
          doc.source.diagnostic("/backend", "", "backend hawk needs a hawk: section (cli, human, ...)"));
    return;
  }
  Section s{doc, "/hawk", errors};
  if (!v["hawk"].is_object()) {
    s.error("", "hawk must be a mapping (cli, human, identity_file, jumphost_host_key, ...)");
    return;
  }
  const json& h = v["hawk"];
  HawkSettings out;
  s.unknown_keys(
      h, {"cli", "human", "identity_file", "jumphost_host_key", "sandbox_host_keys", "start_timeout_s",
          "jumphost_user", "sandbox_user", "start_args", "max_live_evals", "quota_wait_s", "start_retries",
          "unschedulable_grace_s", "stuck_grace_s", "crash_loop_restarts", "human_agent"});
  s.string_at(h, "cli", out.cli);
  if (!s.string_at(h, "human", out.human) && !h.contains("human"))
    s.error("", "hawk.human is required: the registered human whose key the harness logs in with");
  static const std::regex human_re("[A-Za-z0-9][-A-Za-z0-9_.]{0,63}");
  if (!out.human.empty() && !std::regex_match(out.human, human_re))
    s.error("human", "hawk.human '" + out.human + "' is not a human name (letters, digits, - _ .)");
  const std::array<std::pair<std::string, std::string*>, 2> users = {
      {{"jumphost_user", &out.jumphost_user}, {"sandbox_user", &out.sandbox_user}}};
  for (const auto& [key, user] : users) {
    if (s.string_at(h, key, *user) && !std::regex_match(*user, human_re))
      s.error(key, "hawk." + key + " '" + *user + "' is not a user name (letters, digits, - _ .)");
  }
  if (h.contains("start_args")) read_hawk_start_args(doc, h["start_args"], out, errors);
  s.string_at(h, "identity_file", out.identity_file);
  if (s.string_at(h, "jumphost_host_key", out.jumphost_host_key) && !key_line(out.jumphost_host_key))
    s.error("jumphost_host_key",
            "hawk.jumphost_host_key must be an OpenSSH public key line, \"ssh-ed25519 AAAA...\"");
  if (s.string_at(h, "sandbox_host_keys", out.sandbox_host_keys) && out.sandbox_host_keys != "first-use" &&
      out.sandbox_host_keys != "pinned")
    s.error("sandbox_host_keys",
            "hawk.sandbox_host_keys must be first-use or pinned, not '" + out.sandbox_host_keys + "'");
  read_bounded_int(s, h, "start_timeout_s", "a whole number of seconds", 1, 86400, out.start_timeout_s);
  read_bounded_int(s, h, "max_live_evals", "a whole number of evals", 1, 1000, out.max_live_evals);
  read_bounded_int(s, h, "quota_wait_s", "a whole number of seconds", 0, 86400, out.quota_wait_s);
  read_bounded_int(s, h, "start_retries", "a whole number of retries", 0, 10, out.start_retries);
  read_hawk_holds(doc, h, out, errors);
  profile.hawk = out;
}

void read_egress_section(const YamlDocument& doc, DeploymentProfile& profile,
                         std::vector<Diagnostic>& errors) {
  const json& v = doc.value;
  if (!v.contains("egress")) return;
  Section s{doc, "/egress", errors};
  if (!v["egress"].is_object()) {
    s.error("", "egress must be a mapping (allowed_domain_port, internet_canary, metadata, cluster_api)");
    return;
  }
  const json& e = v["egress"];
  EgressSettings out;
  s.unknown_keys(e, {"allowed_domain_port", "internet_canary", "metadata", "cluster_api"});
  if (e.contains("allowed_domain_port")) {
    if (!e["allowed_domain_port"].is_number_integer() || e["allowed_domain_port"].get<long>() < 1 ||
        e["allowed_domain_port"].get<long>() > 65535)
      s.error("allowed_domain_port", "egress.allowed_domain_port must be a port from 1 to 65535");
    else
      out.allowed_domain_port = e["allowed_domain_port"].get<int>();
  }
  for (auto [key, field] :
       {std::pair{"internet_canary", &out.internet_canary}, std::pair{"metadata", &out.metadata},
        std::pair{"cluster_api", &out.cluster_api}}) {
    if (s.string_at(e, key, *field) && !host_port(*field))
      s.error(key, std::string("egress.") + key + " must be \"host:port\", not '" + *field + "'");
  }
  profile.egress = out;
}

void read_node_class_settings(const YamlDocument& doc, DeploymentProfile& profile,
                              std::vector<Diagnostic>& errors) {
  const json& v = doc.value;
  if (!v.contains("node_classes") || !v["node_classes"].is_object()) return;
  static const std::regex env_re("[A-Za-z_][A-Za-z0-9_]{0,127}");
  static const json kNone = json::object();
  for (const auto& [name, settings] : v["node_classes"].items()) {
    NodeClassSettings out;
    Section s{doc, pointer_join("/node_classes", name), errors};
    if (settings.is_object() && settings.contains("env")) {
      const json& env = settings["env"];
      if (!env.is_object()) s.error("env", "env must map variable names to strings");
      for (const auto& [var, value] : (env.is_object() ? env : kNone).items()) {
        if (!std::regex_match(var, env_re) || !value.is_string())
          s.error("env", "env: '" + var + "' must be a variable name with a string value");
        else
          out.env.emplace_back(var, value.get<std::string>());
      }
    }
    if (settings.is_object() && settings.contains("config_overrides")) {
      const json& o = settings["config_overrides"];
      if (!o.is_object() && !o.is_null()) s.error("config_overrides", "config_overrides must be a mapping");
      for (const auto& [key, value] : (o.is_object() ? o : kNone).items())
        if (config_override_reserved(key))
          s.error("config_overrides", "config_overrides may not set '" + key +
                                          "': a node class never changes what is submitted or its isolation");
      if (o.is_object()) out.config_overrides = o;
    }
    if (settings.is_object() && settings.contains("node_selector"))
      read_node_selector(settings["node_selector"], s, out);
    if (settings.is_object() && settings.contains("tolerations"))
      read_tolerations(settings["tolerations"], s, out);
    profile.node_class_settings.emplace_back(name, std::move(out));
  }
}

}  // namespace isoharness::scenario::detail
