#include "harness/deploy/local/sandbox_spec.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "harness/common/capability_table.h"
#include "harness/common/error.h"
#include "harness/deploy/local/address_plan.h"
#include "harness/deploy/local/capabilities.h"
#include "harness/policy/chart_values.h"
#include "harness/scenario/backend_kind.h"

namespace isoharness::deploy::local {
namespace {

using nlohmann::json;

// Collects every problem of one parse, split by kind, then throws once.
struct Problems {
  std::string source;
  std::vector<Diagnostic> bad_input;      // malformed: UserError
  std::vector<std::string> cannot_apply;  // well-formed, not applicable here: InfraError

  void bad(const std::string& path, const std::string& message) {
    bad_input.push_back(Diagnostic{source, 0, 0, path, message});
  }
  void unsupported(const std::string& path, const std::string& message) {
    cannot_apply.push_back(source + ": " + path + ": " + message);
  }
  void raise() const {
    if (!bad_input.empty()) throw UserError(bad_input);
    if (!cannot_apply.empty()) {
      std::string msg = "the local backend cannot apply these controls, so the sandbox is not started:";
      for (const auto& c : cannot_apply) msg += "\n  " + c;
      throw InfraError(msg);
    }
  }
};

void check_keys(const json& obj, const std::string& path, const std::set<std::string>& known, Problems& p) {
  for (const auto& [key, _] : obj.items()) {
    if (!known.count(key)) p.unsupported(path + "." + key, "unknown key (deny by default: not ignored)");
  }
}

std::vector<std::string> string_list(const json& obj, const char* key, const std::string& path, Problems& p) {
  std::vector<std::string> out;
  if (!obj.contains(key) || obj[key].is_null()) return out;
  const json& v = obj[key];
  if (!v.is_array()) {
    p.bad(path + "." + key, "must be a list of strings");
    return out;
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      p.bad(path + "." + key + "[" + std::to_string(i) + "]", "must be a string");
    else
      out.push_back(v[i].get<std::string>());
  }
  return out;
}

bool get_bool(const json& obj, const char* key, const std::string& path, bool fallback, Problems& p) {
  if (!obj.contains(key) || obj[key].is_null()) return fallback;
  if (!obj[key].is_boolean()) {
    p.bad(path + "." + key, "must be true or false");
    return fallback;
  }
  return obj[key].get<bool>();
}

bool safe_mount_path(const std::string& path) {
  if (path.empty() || path[0] != '/' || path == "/" || path.size() > 200) return false;
  if (path.find("/../") != std::string::npos || path.find("/./") != std::string::npos) return false;
  if (path.size() >= 3 && path.compare(path.size() - 3, 3, "/..") == 0) return false;
  for (char c : path)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-' || c == '.'))
      return false;
  for (const char* sys : {"/proc", "/sys", "/dev", "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64"}) {
    std::string s(sys);
    if (path == s || path.rfind(s + "/", 0) == 0) return false;
  }
  return true;
}

void parse_capabilities(const json& caps, const std::string& path, SandboxSpec& spec, Problems& p) {
  if (!caps.is_object()) {
    p.bad(path, "must be a mapping with drop/add");
    return;
  }
  check_keys(caps, path, {"drop", "add"}, p);
  auto drop = string_list(caps, "drop", path, p);
  auto add = string_list(caps, "add", path, p);
  std::vector<std::string> kept = spec.capabilities;
  for (const auto& d : drop) {
    if (d == "ALL" || d == "all") {
      spec.drop_all = true;
      kept.clear();
      continue;
    }
    auto n = capability_number(d);
    if (!n) {
      p.bad(path + ".drop", "unknown capability " + d);
      continue;
    }
    kept.erase(std::remove(kept.begin(), kept.end(), capability_name(*n)), kept.end());
  }
  for (const auto& a : add) {
    if (a == "ALL" || a == "all") {  // every capability the kernel knows, as containerd reads it
      for (int bit = 0; bit < static_cast<int>(kCapabilityNames.size()); ++bit)
        if (std::find(kept.begin(), kept.end(), capability_name(bit)) == kept.end())
          kept.push_back(capability_name(bit));
      continue;
    }
    auto n = capability_number(a);
    if (!n) {
      p.bad(path + ".add", "unknown capability " + a);
      continue;
    }
    if (std::find(kept.begin(), kept.end(), capability_name(*n)) == kept.end())
      kept.push_back(capability_name(*n));
  }
  spec.capabilities = kept;
}

// procMount: Default keeps containerd's masked and read-only /proc paths; Unmasked drops
// them (what the kubelet does for a pod allowed the Unmasked proc mount type).
void parse_proc_mount(const json& sc, const std::string& path, SandboxSpec& spec, Problems& p) {
  if (!sc.contains("procMount")) return;
  if (!sc["procMount"].is_string() || (sc["procMount"] != "Default" && sc["procMount"] != "Unmasked")) {
    p.bad(path + ".procMount", "must be Default or Unmasked");
    return;
  }
  spec.proc_unmasked = sc["procMount"] == "Unmasked";
}

void parse_security_context(const json& sc, const std::string& path, SandboxSpec& spec, Problems& p) {
  if (!sc.is_object()) {
    p.bad(path, "must be a mapping");
    return;
  }
  check_keys(sc, path,
             {"allowPrivilegeEscalation", "capabilities", "seccompProfile", "runAsNonRoot", "runAsUser",
              "runAsGroup", "readOnlyRootFilesystem", "privileged", "procMount"},
             p);
  spec.no_new_privileges = !get_bool(sc, "allowPrivilegeEscalation", path, true, p);
  if (get_bool(sc, "privileged", path, false, p))
    p.unsupported(path + ".privileged",
                  "privileged: true is refused: isoharness never starts a privileged container (every "
                  "capability, every host device, no seccomp, writable /proc/sys and cgroups) as root on a "
                  "shared machine; its parts are applied one by one (docs/SECURITY.md, escape classes)");
  parse_proc_mount(sc, path, spec, p);
  if (sc.contains("capabilities")) parse_capabilities(sc["capabilities"], path + ".capabilities", spec, p);
  if (sc.contains("seccompProfile")) {
    const json& sp = sc["seccompProfile"];
    if (!sp.is_object() || !sp.contains("type") || !sp["type"].is_string()) {
      p.bad(path + ".seccompProfile", "must be a mapping with a string `type`");
    } else {
      check_keys(sp, path + ".seccompProfile", {"type"}, p);
      std::string type = sp["type"].get<std::string>();
      if (type == "RuntimeDefault" || type == "Unconfined")
        spec.seccomp = type;
      else
        p.unsupported(path + ".seccompProfile.type",
                      "seccomp profile type " + type + " is not available locally");
    }
  }
  spec.run_as_non_root = get_bool(sc, "runAsNonRoot", path, false, p);
  for (const char* key : {"runAsUser", "runAsGroup"}) {
    if (!sc.contains(key)) continue;
    if (!sc[key].is_number_integer() || sc[key].get<std::int64_t>() < 0 ||
        sc[key].get<std::int64_t>() > 65534) {
      p.bad(path + "." + key, "must be an integer between 0 and 65534");
      continue;
    }
    if (std::string(key) == "runAsUser") {
      spec.uid = sc[key].get<std::int64_t>();
      spec.run_as_user_set = true;
    } else {
      spec.gid = sc[key].get<std::int64_t>();
    }
  }
  if (spec.run_as_non_root && spec.uid == 0)
    p.unsupported(path + ".runAsNonRoot",
                  "runAsNonRoot with runAsUser 0: the kubelet refuses this container");
  if (spec.uid == 0)
    p.unsupported(path + ".runAsUser",
                  "uid 0: the sandbox's sshd runs as its user and cannot serve logins as root");
  spec.read_only_root = get_bool(sc, "readOnlyRootFilesystem", path, false, p);
}

// A hostPath source the local backend will bind: an absolute path under kHostPathRoot,
// made of safe characters, with no "." or ".." step (no way out of the root by name).
bool safe_host_path(const std::string& path) {
  const std::string root = std::string(kHostPathRoot) + "/";
  if (path.size() <= root.size() || path.size() > 200 || path.compare(0, root.size(), root) != 0)
    return false;
  if (path.find("/../") != std::string::npos || path.find("/./") != std::string::npos ||
      path.find("//") != std::string::npos)
    return false;
  if (path.ends_with("/..") || path.ends_with("/.")) return false;
  return std::all_of(path.begin(), path.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-' || c == '.';
  });
}

// One hostPath volume ({name, hostPath: {path, type}}) into `host_paths` by volume name.
void parse_host_path(const json& v, const std::string& vp, std::map<std::string, HostPathMount>& host_paths,
                     Problems& p) {
  const json& hp = v["hostPath"];
  if (!hp.is_object() || !hp.contains("path") || !hp["path"].is_string()) {
    p.bad(vp + ".hostPath", "must be a mapping with a string `path`");
    return;
  }
  check_keys(hp, vp + ".hostPath", {"path", "type"}, p);
  HostPathMount m{v["name"].get<std::string>(), hp["path"].get<std::string>(), "", false, false};
  const std::string type = hp.contains("type") && hp["type"].is_string() ? hp["type"].get<std::string>() : "";
  if (hp.contains("type") && !hp["type"].is_string()) p.bad(vp + ".hostPath.type", "must be a string");
  if (type == "DirectoryOrCreate")
    m.create = true;
  else if (!type.empty() && type != "Directory")
    p.unsupported(vp + ".hostPath.type", "only Directory and DirectoryOrCreate host paths exist locally");
  if (!safe_host_path(m.host_path))
    p.unsupported(vp + ".hostPath.path",
                  "the local backend mounts host paths only under " + std::string(kHostPathRoot) +
                      " (it runs as root on a shared machine and never hands a sandbox the node's own "
                      "files): " +
                      m.host_path);
  host_paths[m.volume] = m;
}

// values.services.X.volumes: emptyDir scratch, or a hostPath under kHostPathRoot.
void parse_volume_list(const json& svc, const std::string& path, std::set<std::string>& empty_dirs,
                       std::map<std::string, HostPathMount>& host_paths, Problems& p) {
  const json& vols = svc["volumes"];
  if (!vols.is_array()) p.bad(path + ".volumes", "must be a list");
  for (std::size_t i = 0; vols.is_array() && i < vols.size(); ++i) {
    std::string vp = path + ".volumes[" + std::to_string(i) + "]";
    const json& v = vols[i];
    if (v.is_string()) {
      p.unsupported(vp, "the task's named volume " + v.get<std::string>() +
                            " (a claim its services share) cannot be made by the local backend");
      continue;
    }
    if (!v.is_object() || !v.contains("name") || !v["name"].is_string()) {
      p.bad(vp, "must be a mapping with a string `name`");
      continue;
    }
    check_keys(v, vp, {"name", "emptyDir", "hostPath"}, p);
    if (v.contains("emptyDir") == v.contains("hostPath"))
      p.unsupported(vp, "only emptyDir and hostPath volumes exist locally, one per volume");
    else if (v.contains("emptyDir"))
      empty_dirs.insert(v["name"].get<std::string>());
    else
      parse_host_path(v, vp, host_paths, p);
  }
}

// values.services.X.volumeMounts, each naming a volume of the list above.
void parse_volume_mounts(const json& mounts, const std::string& path, const std::set<std::string>& empty_dirs,
                         const std::map<std::string, HostPathMount>& host_paths, SandboxSpec& spec,
                         Problems& p) {
  if (!mounts.is_array()) p.bad(path + ".volumeMounts", "must be a list");
  std::set<std::string> seen_paths;
  for (std::size_t i = 0; mounts.is_array() && i < mounts.size(); ++i) {
    std::string mp = path + ".volumeMounts[" + std::to_string(i) + "]";
    const json& m = mounts[i];
    if (!m.is_object() || !m.contains("name") || !m["name"].is_string() || !m.contains("mountPath") ||
        !m["mountPath"].is_string()) {
      p.bad(mp, "must be a mapping with string `name` and `mountPath`");
      continue;
    }
    check_keys(m, mp, {"name", "mountPath", "readOnly"}, p);
    std::string name = m["name"].get<std::string>(), target = m["mountPath"].get<std::string>();
    const bool read_only = get_bool(m, "readOnly", mp, false, p);
    const auto host = host_paths.find(name);
    if (!empty_dirs.count(name) && host == host_paths.end())
      p.bad(mp + ".name", "no emptyDir or hostPath volume named " + name);
    else if (!safe_mount_path(target))
      p.unsupported(mp + ".mountPath", "cannot mount a volume at " + target);
    else if (!seen_paths.insert(target).second)
      p.bad(mp + ".mountPath", "mounted twice: " + target);
    else if (host == host_paths.end())
      spec.scratch.push_back({name, target});
    else
      spec.host_paths.push_back({name, host->second.host_path, target, read_only, host->second.create});
  }
}

void parse_volumes(const json& svc, const std::string& path, SandboxSpec& spec, Problems& p) {
  std::set<std::string> empty_dirs;
  std::map<std::string, HostPathMount> host_paths;
  if (svc.contains("volumes")) parse_volume_list(svc, path, empty_dirs, host_paths, p);
  if (svc.contains("volumeMounts"))
    parse_volume_mounts(svc["volumeMounts"], path, empty_dirs, host_paths, spec, p);
}

// Image, runtime class (as the chart reads it: absent = its default gvisor, CLUSTER_DEFAULT
// = the node default), network isolation and the GPU resource.
void parse_service_basics(const json& svc, const std::string& path, SandboxSpec& spec, Problems& p) {
  if (svc.contains("image")) {
    if (svc["image"].is_string())
      spec.image = svc["image"].get<std::string>();
    else
      p.bad(path + ".image", "must be a string");
  }
  if (svc.contains("runtimeClassName") && !svc["runtimeClassName"].is_null() &&
      (!svc["runtimeClassName"].is_string() || svc["runtimeClassName"].get<std::string>().empty()))
    p.bad(path + ".runtimeClassName", "must be a non-empty string (CLUSTER_DEFAULT for the node's default)");
  spec.runtime_class = policy::effective_runtime_class(svc).value_or("");
  if (get_bool(svc, "networkIsolated", path, false, p)) spec.network_mode = "none";
  // The item's resolver answers every service's name; a service without a record is not
  // something the local world can make.
  if (!get_bool(svc, "dnsRecord", path, true, p))
    p.unsupported(path + ".dnsRecord", "the local world gives every service a DNS record");
  // resources: cpu and memory are service settings (service_settings.cc), the GPU is read here.
  spec.gpu = policy::service_gpus(svc) > 0;
}

// The item's egress allow lists: domain names, IPv4 ranges the local world can route, and
// the one entity it has (`world`).
void parse_allow_lists(const json& values, SandboxSpec& spec, Problems& p) {
  spec.allow_domains = string_list(values, "allowDomains", "values", p);
  for (const auto& d : spec.allow_domains) {
    bool ok = !d.empty() && d.size() <= 253;
    for (char c : d)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '*')) ok = false;
    if (!ok) p.bad("values.allowDomains", "not a domain name: " + d);
  }
  spec.allow_cidr = string_list(values, "allowCIDR", "values", p);
  for (const auto& c : spec.allow_cidr)
    if (!parse_cidr(c)) p.unsupported("values.allowCIDR", "not an IPv4 CIDR the local world can route: " + c);
  spec.allow_entities = string_list(values, "allowEntities", "values", p);
  for (const auto& e : spec.allow_entities)
    if (e != "world") p.unsupported("values.allowEntities", "entity " + e + " does not exist locally");
  if (!values.contains("allowDomainsPorts")) return;
  const auto& ports = values["allowDomainsPorts"];
  if (!ports.is_array())
    return p.bad("values.allowDomainsPorts", "must be a list of {port, protocol, domain}");
  for (std::size_t i = 0; i < ports.size(); ++i) {
    const auto& e = ports[i];
    const std::string at = "values.allowDomainsPorts[" + std::to_string(i) + "]";
    DomainPort d;
    if (!e.is_object() || !e.contains("port") || !e["port"].is_number_integer() ||
        e["port"].get<long long>() < 1 || e["port"].get<long long>() > 65535) {
      p.bad(at, "must be {port: 1..65535, protocol: TCP/UDP/ANY, domain: name}");
      continue;
    }
    d.port = e["port"].get<int>();
    if (e.contains("protocol")) {
      d.protocol = e["protocol"].is_string() ? e["protocol"].get<std::string>() : "";
      for (char& c : d.protocol) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    if (d.protocol != "TCP" && d.protocol != "UDP" && d.protocol != "ANY") {
      p.bad(at + ".protocol", "must be TCP, UDP or ANY");
      continue;
    }
    if (e.contains("domain")) {
      if (!e["domain"].is_string()) {
        p.bad(at + ".domain", "must be a string");
        continue;
      }
      d.domain = e["domain"].get<std::string>();
    }
    spec.allow_domains_ports.push_back(std::move(d));
  }
}

}  // namespace

SandboxSpec parse_sandbox_values(const json& values, const std::string& source, const std::string& service) {
  Problems p{source, {}, {}};
  SandboxSpec spec;
  spec.capabilities = containerd_default_capabilities();
  if (!values.is_object()) {
    p.bad("values", "must be a mapping (docs/CONTRACTS.md §1)");
    p.raise();
  }
  if (values.contains("volumes"))
    p.unsupported("values.volumes",
                  "the task's named volumes (claims its services share) cannot be made by the "
                  "local backend");
  check_keys(values, "values",
             {"services", "allowDomains", "allowDomainsPorts", "allowCIDR", "allowEntities", "volumes",
              "automountServiceAccountToken"},
             p);
  spec.service_account_token = get_bool(values, "automountServiceAccountToken", "values", false, p);
  if (!values.contains("services") || !values["services"].is_object() ||
      !values["services"].contains("default")) {
    p.bad("values.services", "must hold the agent's service `default`");
    p.raise();
  }
  for (const auto& [name, _] : values["services"].items())
    if (name != "default") spec.other_services.push_back(name);
  if (!values["services"].contains(service)) {
    p.bad("values.services", "has no service `" + service + "`");
    p.raise();
  }
  spec.service = service;
  const json& svc = values["services"][service];
  const std::string path = "values.services." + service;
  if (!svc.is_object()) {
    p.bad(path, "must be a mapping");
    p.raise();
  }
  std::set<std::string> service_keys = {"image",     "runtimeClassName", "networkIsolated", "dnsRecord",
                                        "resources", "securityContext",  "volumes",         "volumeMounts"};
  for (const auto& key : service_setting_keys()) service_keys.insert(key);
  for (const auto& [key, why] : service_keys_not_applied())
    service_keys.insert(key);  // refused by name there
  check_keys(svc, path, service_keys, p);
  parse_service_basics(svc, path, spec, p);
  spec.settings = parse_service_settings(
      svc, path, [&](const std::string& at, const std::string& m) { p.bad(at, m); },
      [&](const std::string& at, const std::string& m) { p.unsupported(at, m); });
  if (svc.contains("securityContext"))
    parse_security_context(svc["securityContext"], path + ".securityContext", spec, p);
  parse_volumes(svc, path, spec, p);

  parse_allow_lists(values, spec, p);
  p.raise();
  return spec;
}

namespace {

// jumphost_link: { rtt_ms: 0..2000, loss_percent: 0..50 } (a simulated far deployment).
template <typename Bad>
void read_jumphost_link(const json& profile, LocalProfile& out, Bad& bad) {
  if (!profile.contains("jumphost_link")) return;
  const json& l = profile["jumphost_link"];
  if (!l.is_object()) return bad("jumphost_link", "must be a mapping {rtt_ms, loss_percent}");
  for (const auto& [key, value] : l.items())
    if (key != "rtt_ms" && key != "loss_percent")
      bad("jumphost_link." + key, "unknown key (known: rtt_ms, loss_percent)");
  if (l.contains("rtt_ms")) {
    if (!l["rtt_ms"].is_number_integer() || l["rtt_ms"].get<long>() < 0 || l["rtt_ms"].get<long>() > 2000)
      bad("jumphost_link.rtt_ms", "must be a whole number of milliseconds from 0 to 2000");
    else
      out.link_rtt_ms = l["rtt_ms"].get<int>();
  }
  if (l.contains("loss_percent")) {
    if (!l["loss_percent"].is_number() || l["loss_percent"].get<double>() < 0 ||
        l["loss_percent"].get<double>() > 50)
      bad("jumphost_link.loss_percent", "must be a number from 0 to 50");
    else
      out.link_loss_percent = l["loss_percent"].get<double>();
  }
}

}  // namespace

LocalProfile parse_local_profile(const json& profile) {
  std::vector<Diagnostic> problems;
  auto bad = [&](const std::string& item, const std::string& msg) {
    problems.push_back(Diagnostic{"deployment profile", 0, 0, item, msg});
  };
  LocalProfile out;
  if (!profile.is_object()) throw UserError("deployment profile: must be a mapping");
  if (!profile.contains("node_classes") || !profile["node_classes"].is_object() ||
      profile["node_classes"].empty()) {
    bad("node_classes", "must map node class names to {cpuset, noisy_neighbour}");
  } else {
    for (const auto& [name, nc] : profile["node_classes"].items()) {
      std::string item = "node_classes." + name;
      if (!nc.is_object() || !nc.contains("cpuset") || !nc["cpuset"].is_string()) {
        bad(item, "must have a string `cpuset` (e.g. \"1\" or \"0-1\")");
        continue;
      }
      NodeClass c;
      c.cpuset = nc["cpuset"].get<std::string>();
      if (c.cpuset.empty() || c.cpuset.find_first_not_of("0123456789,-") != std::string::npos)
        bad(item + ".cpuset", "not a CPU list: " + c.cpuset);
      if (nc.contains("noisy_neighbour")) {
        if (!nc["noisy_neighbour"].is_boolean())
          bad(item + ".noisy_neighbour", "must be true or false");
        else
          c.noisy_neighbour = nc["noisy_neighbour"].get<bool>();
      }
      out.node_classes[name] = c;
    }
  }
  if (profile.contains("runtime_handlers")) {
    if (!profile["runtime_handlers"].is_object()) {
      bad("runtime_handlers", "must map runtime classes to runc or runsc");
    } else {
      for (const auto& [cls, h] : profile["runtime_handlers"].items()) {
        const auto runtime = h.is_string() ? oci_runtime_from(h.get<std::string>()) : std::nullopt;
        if (!runtime)
          bad("runtime_handlers." + cls, "must be \"runc\" or \"runsc\"");
        else
          out.runtime_handlers[cls] = *runtime;
      }
    }
  }
  read_jumphost_link(profile, out, bad);
  if (!problems.empty()) throw UserError(problems);
  return out;
}

OciRuntime runtime_for(const SandboxSpec& spec, const LocalProfile& profile) {
  if (spec.runtime_class.empty()) return OciRuntime::runc;
  auto it = profile.runtime_handlers.find(spec.runtime_class);
  if (it == profile.runtime_handlers.end())
    throw InfraError(
        "runtime class " + spec.runtime_class +
        " has no handler in the deployment profile's runtime_handlers; it is never run under runc");
  return it->second;
}

json default_local_profile() {
  return json{{"name", "local"},
              {"backend", scenario::backend_name(scenario::BackendKind::local)},
              {"runtime_classes", json::array({"gvisor"})},
              {"sandbox_runtime_class", "gvisor"},
              {"runtime_handlers", {{"gvisor", "runsc"}}},
              {"node_classes",
               {{"tier", {{"cpuset", "1"}, {"noisy_neighbour", false}}},
                {"non-tier", {{"cpuset", "0-1"}, {"noisy_neighbour", true}}}}}};
}

}  // namespace isoharness::deploy::local
