// The deployment profile's `witness:` section (docs/CONTRACTS.md §4.4): an outside witness
// the operator runs, named by its canary addresses, its DNS zone and where its log is read.
// Every value is checked here, so the hawk backend only ever connects to an address the
// profile spelled out and asks for a path that cannot smuggle anything into the request.
#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <regex>

#include "harness/scenario/profile_sections.h"

namespace isoharness::scenario::detail {
namespace {

using nlohmann::json;

struct WitnessReader {
  const YamlDocument& doc;
  std::vector<Diagnostic>& errors;

  // `key` is a dotted path below witness: ("log.ssh.host" points at /witness/log/ssh/host).
  void error(const std::string& key, const std::string& message) const {
    std::string pointer = "/witness";
    for (std::size_t start = 0; !key.empty() && start <= key.size();) {
      const auto dot = std::min(key.find('.', start), key.size());
      pointer = pointer_join(pointer, std::string_view(key).substr(start, dot - start));
      start = dot + 1;
    }
    errors.push_back(
        doc.source.diagnostic(pointer, "", "witness" + (key.empty() ? "" : "." + key) + " " + message));
  }
  // An integer from low to high at key (when present).
  void bounded(const json& w, const std::string& key, long low, long high, int& out) const {
    if (!w.contains(key)) return;
    if (!w[key].is_number_integer() || w[key].get<long>() < low || w[key].get<long>() > high)
      return error(key, "must be a whole number from " + std::to_string(low) + " to " + std::to_string(high));
    out = w[key].get<int>();
  }
};

bool ipv4_literal(const std::string& s) {
  in_addr a{};
  return ::inet_pton(AF_INET, s.c_str(), &a) == 1;
}

// The address in inet_ntop's canonical form (the form a witness logs), "" when not IPv6.
std::string canonical_ipv6(const std::string& s) {
  in6_addr a{};
  if (::inet_pton(AF_INET6, s.c_str(), &a) != 1) return "";
  char text[INET6_ADDRSTRLEN] = {};
  return ::inet_ntop(AF_INET6, &a, text, sizeof text) ? text : "";
}

// A DNS zone of lower-case labels (letters, digits, '-'), at most 200 characters, leaving
// room for the probe's "ihw-<nonce>." label in front of it.
bool zone_name(std::string_view z) {
  if (z.empty() || z.size() > 200 || z.front() == '.' || z.back() == '.') return false;
  std::size_t label = 0;
  for (char c : z) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') || ++label > 63) return false;
  }
  return true;
}

// A request path of unreserved URL characters and '/', starting with '/', at most 256 long:
// nothing that could end the request line or add a header.
bool request_path(std::string_view p) {
  return !p.empty() && p.size() <= 256 && p.front() == '/' && std::all_of(p.begin(), p.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~' || c == '/';
  });
}

// "http://HOST[:PORT]/PATH" into out; false when it is not one.
bool parse_log_url(const std::string& url, WitnessSettings& out) {
  constexpr std::string_view scheme = "http://";
  if (url.rfind(scheme, 0) != 0) return false;
  const std::string rest = url.substr(scheme.size());
  const auto slash = rest.find('/');
  if (slash == std::string::npos) return false;
  std::string host = rest.substr(0, slash);
  const auto colon = host.find(':');
  int port = 80;
  if (colon != std::string::npos) {
    const std::string p = host.substr(colon + 1);
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
    if (p.empty() || ec != std::errc() || end != p.data() + p.size() || port < 1 || port > 65535)
      return false;
    host.resize(colon);
  }
  if (host != "jumphost" && !ipv4_literal(host)) return false;
  if (!request_path(rest.substr(slash))) return false;
  out.log_host = host;
  out.log_port = port;
  out.log_path = rest.substr(slash);
  return true;
}

void read_witness_addresses(const WitnessReader& r, const json& w, WitnessSettings& out) {
  if (!w.contains("canary") || !w["canary"].is_string() || !ipv4_literal(w["canary"].get<std::string>()))
    r.error("canary", "is required: the IPv4 address the witness listens on (an address, not a name)");
  else
    out.canary = w["canary"].get<std::string>();
  if (w.contains("canary6")) {
    out.canary6 = w["canary6"].is_string() ? canonical_ipv6(w["canary6"].get<std::string>()) : "";
    if (out.canary6.empty()) r.error("canary6", "must be an IPv6 address");
  }
  if (w.contains("zone")) {
    out.zone = w["zone"].is_string() ? w["zone"].get<std::string>() : "";
    if (!zone_name(out.zone))
      r.error("zone", "must be a DNS zone of lower-case labels (at most 200 characters)");
  }
  r.bounded(w, "tcp_port", 0, 65535, out.tcp_port);
  if (w.contains("udp_ports")) {
    out.udp_ports.clear();
    const json& ports = w["udp_ports"];
    bool ok = ports.is_array() && ports.size() <= 8;
    for (const auto& p : ok ? ports : json::array()) {
      ok = ok && p.is_number_integer() && p.get<long>() >= 1 && p.get<long>() <= 65535;
      if (ok) out.udp_ports.push_back(p.get<int>());
    }
    if (!ok) r.error("udp_ports", "must be a list of at most 8 ports from 1 to 65535");
  }
}

// The token the witness's lines are MACed with: token_file (an absolute path) or token_env
// (an environment variable's name), exactly one.
void read_witness_token(const WitnessReader& r, const json& log, WitnessSettings& out) {
  if (log.contains("token_file") == log.contains("token_env"))
    return r.error("log",
                   "needs exactly one of token_file (an absolute path) and token_env (a variable's name): "
                   "the token the witness authenticates its lines with");
  if (log.contains("token_file")) {
    const json& f = log["token_file"];
    if (!f.is_string() || f.get<std::string>().empty() || f.get<std::string>().front() != '/')
      return r.error("log", "token_file must be an absolute path");
    out.log_token_file = f.get<std::string>();
    return;
  }
  const json& e = log["token_env"];
  const std::string name = e.is_string() ? e.get<std::string>() : "";
  const bool ok = !name.empty() && name.size() <= 128 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!ok) return r.error("log", "token_env must be an environment variable's name (A-Z, 0-9, _)");
  out.log_token_env = name;
}

// An OpenSSH public key line of a type libssh2 verifies: "type base64" (a comment may follow).
bool ssh_host_key_line(const std::string& s) {
  static const std::regex re("(ssh-ed25519|ecdsa-sha2-nistp(256|384|521)) [A-Za-z0-9+/]+=*( [^\n]*)?");
  return s.size() <= 1024 && std::regex_match(s, re);
}

// A login name: a lower-case letter or '_', then letters, digits, '_' and '-', at most 32.
bool login_name(std::string_view u) {
  return !u.empty() && u.size() <= 32 && ((u[0] >= 'a' && u[0] <= 'z') || u[0] == '_') &&
         std::all_of(u.begin(), u.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
         });
}

// An absolute path of printable ASCII without spaces, at most 1024 characters.
bool absolute_path(std::string_view p) {
  return !p.empty() && p.size() <= 1024 && p.front() == '/' &&
         std::all_of(p.begin(), p.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

// log.ssh: {host, port, user, identity_file, host_key, path}, every key but port required.
void read_witness_ssh(const WitnessReader& r, const json& ssh, WitnessSettings& out) {
  if (!ssh.is_object())
    return r.error("log.ssh", "must be a mapping (host, port, user, identity_file, host_key, path)");
  for (const auto& [key, value] : ssh.items())
    if (key != "host" && key != "port" && key != "user" && key != "identity_file" && key != "host_key" &&
        key != "path")
      r.error("log.ssh",
              "has an unknown key '" + key + "' (known: host, port, user, identity_file, host_key, path)");
  const auto text = [&](const char* key) {
    return ssh.contains(key) && ssh[key].is_string() ? ssh[key].get<std::string>() : "";
  };
  WitnessLogSsh s{text("host"), 22, text("user"), text("identity_file"), text("host_key"), text("path")};
  if (!ipv4_literal(s.host)) r.error("log.ssh.host", "is required: the SSH server's IPv4 address");
  if (ssh.contains("port") &&
      (!ssh["port"].is_number_integer() || ssh["port"].get<long>() < 1 || ssh["port"].get<long>() > 65535))
    r.error("log.ssh.port", "must be a whole number from 1 to 65535");
  else if (ssh.contains("port"))
    s.port = ssh["port"].get<int>();
  if (!login_name(s.user))
    r.error("log.ssh.user", "is required: a login name ([a-z_][a-z0-9_-]*, at most 32)");
  if (!absolute_path(s.identity_file))
    r.error("log.ssh.identity_file", "is required: the absolute path of an unencrypted ed25519 or ECDSA key");
  if (!ssh_host_key_line(s.host_key))
    r.error("log.ssh.host_key",
            "is required: the server's pinned host key, an OpenSSH line \"ssh-ed25519 AAAA...\" (or ECDSA)");
  if (!absolute_path(s.path)) r.error("log.ssh.path", "is required: the log's absolute path on the server");
  out.log_ssh = s;
}

void read_witness_log(const WitnessReader& r, const json& w, WitnessSettings& out) {
  const json& log = w.contains("log") ? w["log"] : json();
  if (!log.is_object() || log.contains("http") == log.contains("ssh")) {
    r.error("log",
            "is required: a mapping with exactly one of http: \"http://ADDRESS[:PORT]/PATH\" and ssh: {host, "
            "port, user, identity_file, host_key, path} (max_bytes, timeout_s)");
    return;
  }
  for (const auto& [key, value] : log.items())
    if (key != "http" && key != "ssh" && key != "max_bytes" && key != "timeout_s" && key != "token_file" &&
        key != "token_env")
      r.error("log", "has an unknown key '" + key +
                         "' (known: http, ssh, max_bytes, timeout_s, token_file, token_env)");
  if (log.contains("ssh")) {
    if (log.contains("token_file") || log.contains("token_env"))
      r.error("log", "takes no token_file or token_env with ssh: the file is read as it is, without MACs");
    read_witness_ssh(r, log["ssh"], out);
  } else {
    read_witness_token(r, log, out);
    if (!log["http"].is_string() || !parse_log_url(log["http"].get<std::string>(), out))
      r.error("log",
              "http must be \"http://ADDRESS[:PORT]/PATH\" with an IPv4 address or the word jumphost, "
              "and a path of letters, digits and -._~/");
  }
  if (log.contains("max_bytes")) {
    const json& m = log["max_bytes"];
    if (!m.is_number_integer() || m.get<long long>() < 4096 || m.get<long long>() > (256LL << 20))
      r.error("log", "max_bytes must be a whole number from 4096 to 268435456");
    else
      out.max_log_bytes = m.get<std::size_t>();
  }
  if (log.contains("timeout_s")) {
    const json& t = log["timeout_s"];
    if (!t.is_number_integer() || t.get<long>() < 1 || t.get<long>() > 120)
      r.error("log", "timeout_s must be a whole number of seconds from 1 to 120");
    else
      out.log_timeout_s = t.get<int>();
  }
}

}  // namespace

void read_node_view_section(const YamlDocument& doc, DeploymentProfile& profile,
                            std::vector<Diagnostic>& errors) {
  const json& v = doc.value;
  if (!v.contains("node_view")) return;
  const json& n = v["node_view"];
  if (n.is_string() && n.get<std::string>() == "none") {
    profile.node_view_none = true;
    return;
  }
  errors.push_back(doc.source.diagnostic(
      "/node_view", "",
      "node_view must be the word none (the deployment declares it has no view of its nodes)"));
}

void read_witness_section(const YamlDocument& doc, DeploymentProfile& profile,
                          std::vector<Diagnostic>& errors) {
  const json& v = doc.value;
  if (!v.contains("witness")) return;
  WitnessReader r{doc, errors};
  const json& w = v["witness"];
  if (w.is_string() && w.get<std::string>() == "none") {
    profile.witness_none = true;
    return;
  }
  if (!w.is_object())
    return r.error("", "must be a mapping (canary, canary6, zone, log, ...) or the word none");
  for (const auto& [key, value] : w.items()) {
    static const std::array<std::string_view, 8> known{"canary",    "canary6", "zone",      "tcp_port",
                                                       "udp_ports", "log",     "settle_ms", "clock_slack_ms"};
    if (std::find(known.begin(), known.end(), key) == known.end())
      r.error("",
              "has an unknown key '" + key +
                  "' (known: canary, canary6, zone, tcp_port, udp_ports, log, settle_ms, clock_slack_ms)");
  }
  WitnessSettings out;
  read_witness_addresses(r, w, out);
  read_witness_log(r, w, out);
  r.bounded(w, "settle_ms", 0, 5000, out.settle_ms);
  r.bounded(w, "clock_slack_ms", 0, 60000, out.clock_slack_ms);
  profile.witness = out;
}

}  // namespace isoharness::scenario::detail
