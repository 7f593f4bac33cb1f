#include "harness/deploy/node_view.h"

#include <cstdio>
#include <cstdlib>

#include "harness/common/json_read.h"

namespace isoharness::deploy {
using nlohmann::json;

const char* node_runtime_name(NodeRuntime runtime) {
  switch (runtime) {
    case NodeRuntime::runc:
      return "runc";
    case NodeRuntime::runsc:
      return "runsc";
    case NodeRuntime::unknown:
      break;
  }
  return "unknown";
}

NodeRuntime node_runtime_from(std::string_view name) {
  if (name == "runc") return NodeRuntime::runc;
  if (name == "runsc") return NodeRuntime::runsc;
  return NodeRuntime::unknown;
}

const NodeContainer* node_container(const NodeView& view, std::string_view service) {
  for (const auto& c : view.containers)
    if (c.service == service) return &c;
  return nullptr;
}

bool standard_device(std::string_view name) {
  static constexpr std::string_view kStandard[] = {"null",    "zero",   "full",   "random", "urandom",  "tty",
                                                   "console", "ptmx",   "pts",    "shm",    "mqueue",   "fd",
                                                   "stdin",   "stdout", "stderr", "core",   "hugepages"};
  for (auto s : kStandard)
    if (name == s) return true;
  return false;
}

namespace {

std::string hex16(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

template <typename T>
void put(json& out, const char* key, const std::optional<T>& v) {
  if (v) out[key] = *v;
}

void put_caps(json& out, const char* key, const std::optional<std::uint64_t>& v) {
  if (v) out[key] = hex16(*v);
}

json ranges_json(const std::vector<NodeIdRange>& ranges) {
  json a = json::array();
  for (const auto& r : ranges) a.push_back({r.inside, r.outside, r.count});
  return a;
}

json namespaces_json(const NodeNamespaces& ns) {
  json o = json::object();
  put(o, "pid", ns.pid);
  put(o, "net", ns.net);
  put(o, "ipc", ns.ipc);
  put(o, "uts", ns.uts);
  put(o, "mnt", ns.mnt);
  put(o, "user", ns.user);
  put(o, "cgroup", ns.cgroup);
  return o;
}

json confinement_json(const NodeConfinement& c) {
  json o = json::object();
  put_caps(o, "cap_eff", c.cap_eff);
  put_caps(o, "cap_prm", c.cap_prm);
  put_caps(o, "cap_bnd", c.cap_bnd);
  put_caps(o, "cap_amb", c.cap_amb);
  put(o, "no_new_privs", c.no_new_privs);
  put(o, "seccomp_mode", c.seccomp_mode);
  put(o, "seccomp_filters", c.seccomp_filters);
  put(o, "uid", c.uid);
  put(o, "gid", c.gid);
  if (!c.uid_map.empty()) o["uid_map"] = ranges_json(c.uid_map);
  if (!c.gid_map.empty()) o["gid_map"] = ranges_json(c.gid_map);
  o["shares_node"] = namespaces_json(c.shares_node);
  return o;
}

json filesystem_json(const NodeFilesystem& f) {
  json o = json::object();
  put(o, "root_read_only", f.root_read_only);
  put(o, "host_paths", f.host_paths);
  put(o, "masked_paths", f.masked_paths);
  put(o, "read_only_paths", f.read_only_paths);
  put(o, "runtime_sockets", f.runtime_sockets);
  put(o, "service_account_tokens", f.service_account_tokens);
  put(o, "cgroup_writable", f.cgroup_writable);
  put(o, "proc_sys_read_only", f.proc_sys_read_only);
  put(o, "debugfs_mounted", f.debugfs_mounted);
  json mounts = json::array();
  for (const auto& m : f.mounts)
    mounts.push_back({{"destination", m.destination},
                      {"source", m.source},
                      {"fstype", m.fstype},
                      {"read_only", m.read_only},
                      {"bind", m.bind}});
  o["mounts"] = std::move(mounts);
  return o;
}

json gvisor_json(const NodeGvisor& g) {
  json o = json::object();
  put(o, "platform", g.platform);
  put(o, "network", g.network);
  put(o, "nvproxy", g.nvproxy);
  put(o, "net_raw", g.net_raw);
  put(o, "oci_seccomp", g.oci_seccomp);
  put(o, "sentry_pid", g.sentry_pid);
  o["sentry"] = confinement_json(g.sentry);
  put(o, "processes_hidden", g.processes_hidden);
  o["host_processes"] = g.host_processes;
  return o;
}

json container_json(const NodeContainer& c) {
  json o = {{"id", c.id},
            {"service", c.service},
            {"runtime", node_runtime_name(c.runtime)},
            {"runtime_evidence", c.runtime_evidence},
            {"source", c.source},
            {"process", confinement_json(c.process)},
            {"filesystem", filesystem_json(c.filesystem)},
            {"problems", c.problems}};
  put(o, "init_pid", c.init_pid);
  put(o, "devices", c.devices);
  if (c.gvisor) o["gvisor"] = gvisor_json(*c.gvisor);
  return o;
}

}  // namespace

json to_json(const NodeView& view) {
  json containers = json::array();
  for (const auto& c : view.containers) containers.push_back(container_json(c));
  return {{"schema", kNodeViewSchema}, {"witness", view.witness}, {"unix_ms", view.unix_ms},
          {"complete", view.complete}, {"note", view.note},       {"containers", std::move(containers)}};
}

std::string write_node_view(const NodeView& view) {
  return to_json(view).dump();
}

// ---- reading ---------------------------------------------------------------------------

namespace {

// At most kMaxNodeViewText bytes of `s`, cut before a UTF-8 continuation byte so the text
// stays valid UTF-8 (the writer refuses anything else).
std::string cut(std::string s) {
  if (s.size() <= kMaxNodeViewText) return s;
  std::size_t n = kMaxNodeViewText;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  s.resize(n);
  return s;
}

// Reads one document, noting every member of the wrong type and every list cut short.
class Reader {
 public:
  std::vector<std::string> problems;

  std::optional<bool> boolean(const json& o, const char* key, const std::string& where) {
    return r_.boolean(o, key, where);
  }
  std::optional<std::string> text(const json& o, const char* key, const std::string& where) {
    auto s = r_.string(o, key, where);
    if (s && s->size() > kMaxNodeViewText) {
      problems.push_back(where + "." + key + ": longer than " + std::to_string(kMaxNodeViewText) + " bytes");
      *s = cut(std::move(*s));
    }
    return s;
  }
  std::optional<int> small_int(const json& o, const char* key, const std::string& where) {
    auto v = r_.integer(o, key, where);
    if (!v) return std::nullopt;
    if (*v < -1 || *v > 1LL << 30) {
      problems.push_back(where + "." + key + ": out of range");
      return std::nullopt;
    }
    return static_cast<int>(*v);
  }
  std::optional<long long> id(const json& o, const char* key, const std::string& where) {
    auto v = r_.integer(o, key, where);
    if (v && (*v < 0 || *v > 0xffffffffLL)) {
      problems.push_back(where + "." + key + ": not an id");
      return std::nullopt;
    }
    return v;
  }
  // A capability set: 1 to 16 hex digits.
  std::optional<std::uint64_t> caps(const json& o, const char* key, const std::string& where) {
    auto s = r_.string(o, key, where);
    if (!s) return std::nullopt;
    bool ok = !s->empty() && s->size() <= 16;
    for (char c : *s) ok = ok && std::isxdigit(static_cast<unsigned char>(c));
    if (!ok) {
      problems.push_back(where + "." + key + ": not a capability set");
      return std::nullopt;
    }
    return std::strtoull(s->c_str(), nullptr, 16);
  }
  std::optional<std::vector<std::string>> strings(const json& o, const char* key, const std::string& where) {
    const auto* m = common::json_member(o, key);
    if (!m || m->is_null()) return std::nullopt;
    if (!m->is_array()) {
      problems.push_back(where + "." + key + ": not a list");
      return std::nullopt;
    }
    std::vector<std::string> out;
    for (const auto& v : *m) {
      if (!v.is_string()) {
        problems.push_back(where + "." + key + ": an entry is not a string");
        return std::nullopt;  // a list read in part is not the list
      }
      if (out.size() == kMaxNodeViewList) {
        problems.push_back(where + "." + key + ": more than " + std::to_string(kMaxNodeViewList) +
                           " entries");
        return std::nullopt;
      }
      out.push_back(cut(v.get<std::string>()));
    }
    return out;
  }
  const json& object(const json& o, const char* key, const std::string& where) {
    static const json kEmpty = json::object();
    const auto* m = common::json_member(o, key);
    if (m && !m->is_null() && !m->is_object()) problems.push_back(where + "." + key + ": not an object");
    return m && m->is_object() ? *m : kEmpty;
  }
  void merge() {
    problems.insert(problems.end(), r_.problems().begin(), r_.problems().end());
    r_ = {};
  }

 private:
  common::JsonReader r_;
};

std::vector<NodeIdRange> read_ranges(Reader& r, const json& o, const char* key, const std::string& where) {
  std::vector<NodeIdRange> out;
  const auto* m = common::json_array(o, key);
  if (!m) return out;
  for (const auto& row : *m) {
    if (!row.is_array() || row.size() != 3 || !row[0].is_number_integer() || !row[1].is_number_integer() ||
        !row[2].is_number_integer() || out.size() == kMaxNodeViewList) {
      r.problems.push_back(where + "." + key + ": a malformed range");
      return {};
    }
    out.push_back({row[0].get<long long>(), row[1].get<long long>(), row[2].get<long long>()});
  }
  return out;
}

NodeNamespaces read_namespaces(Reader& r, const json& o, const std::string& where) {
  NodeNamespaces ns;
  ns.pid = r.boolean(o, "pid", where);
  ns.net = r.boolean(o, "net", where);
  ns.ipc = r.boolean(o, "ipc", where);
  ns.uts = r.boolean(o, "uts", where);
  ns.mnt = r.boolean(o, "mnt", where);
  ns.user = r.boolean(o, "user", where);
  ns.cgroup = r.boolean(o, "cgroup", where);
  return ns;
}

NodeConfinement read_confinement(Reader& r, const json& o, const std::string& where) {
  NodeConfinement c;
  c.cap_eff = r.caps(o, "cap_eff", where);
  c.cap_prm = r.caps(o, "cap_prm", where);
  c.cap_bnd = r.caps(o, "cap_bnd", where);
  c.cap_amb = r.caps(o, "cap_amb", where);
  c.no_new_privs = r.boolean(o, "no_new_privs", where);
  c.seccomp_mode = r.small_int(o, "seccomp_mode", where);
  c.seccomp_filters = r.small_int(o, "seccomp_filters", where);
  c.uid = r.id(o, "uid", where);
  c.gid = r.id(o, "gid", where);
  c.uid_map = read_ranges(r, o, "uid_map", where);
  c.gid_map = read_ranges(r, o, "gid_map", where);
  c.shares_node = read_namespaces(r, r.object(o, "shares_node", where), where + ".shares_node");
  return c;
}

std::vector<NodeMount> read_mounts(Reader& r, const json& o, const std::string& where) {
  std::vector<NodeMount> out;
  const auto* m = common::json_array(o, "mounts");
  if (!m) return out;
  for (const auto& e : *m) {
    if (out.size() == kMaxNodeViewList) {
      r.problems.push_back(where + ".mounts: more than " + std::to_string(kMaxNodeViewList) + " entries");
      break;
    }
    NodeMount mount;
    mount.destination = r.text(e, "destination", where + ".mounts").value_or("");
    mount.source = r.text(e, "source", where + ".mounts").value_or("");
    mount.fstype = r.text(e, "fstype", where + ".mounts").value_or("");
    mount.read_only = r.boolean(e, "read_only", where + ".mounts").value_or(false);
    mount.bind = r.boolean(e, "bind", where + ".mounts").value_or(false);
    out.push_back(std::move(mount));
  }
  return out;
}

NodeFilesystem read_filesystem(Reader& r, const json& o, const std::string& where) {
  NodeFilesystem f;
  f.root_read_only = r.boolean(o, "root_read_only", where);
  f.host_paths = r.strings(o, "host_paths", where);
  f.masked_paths = r.strings(o, "masked_paths", where);
  f.read_only_paths = r.strings(o, "read_only_paths", where);
  f.runtime_sockets = r.strings(o, "runtime_sockets", where);
  f.service_account_tokens = r.strings(o, "service_account_tokens", where);
  f.cgroup_writable = r.boolean(o, "cgroup_writable", where);
  f.proc_sys_read_only = r.boolean(o, "proc_sys_read_only", where);
  f.debugfs_mounted = r.boolean(o, "debugfs_mounted", where);
  f.mounts = read_mounts(r, o, where);
  return f;
}

NodeGvisor read_gvisor(Reader& r, const json& o, const std::string& where) {
  NodeGvisor g;
  g.platform = r.text(o, "platform", where);
  g.network = r.text(o, "network", where);
  g.nvproxy = r.boolean(o, "nvproxy", where);
  g.net_raw = r.boolean(o, "net_raw", where);
  g.oci_seccomp = r.boolean(o, "oci_seccomp", where);
  g.sentry_pid = r.small_int(o, "sentry_pid", where);
  g.sentry = read_confinement(r, r.object(o, "sentry", where), where + ".sentry");
  g.processes_hidden = r.boolean(o, "processes_hidden", where);
  g.host_processes = r.strings(o, "host_processes", where).value_or(std::vector<std::string>{});
  return g;
}

NodeContainer read_container(Reader& r, const json& o, const std::string& where) {
  NodeContainer c;
  c.id = r.text(o, "id", where).value_or("");
  c.service = r.text(o, "service", where).value_or("");
  c.runtime = node_runtime_from(r.text(o, "runtime", where).value_or(""));
  c.runtime_evidence = r.text(o, "runtime_evidence", where).value_or("");
  c.init_pid = r.small_int(o, "init_pid", where);
  c.source = r.text(o, "source", where).value_or("");
  c.process = read_confinement(r, r.object(o, "process", where), where + ".process");
  c.filesystem = read_filesystem(r, r.object(o, "filesystem", where), where + ".filesystem");
  c.devices = r.strings(o, "devices", where);
  if (const auto* g = common::json_object(o, "gvisor")) c.gvisor = read_gvisor(r, *g, where + ".gvisor");
  c.problems = r.strings(o, "problems", where).value_or(std::vector<std::string>{});
  return c;
}

}  // namespace

NodeViewRead node_view_from_json(const json& doc) {
  NodeViewRead out;
  if (!doc.is_object()) {
    out.error = "the node view is not a JSON object";
    return out;
  }
  if (common::json_string(doc, "schema") != std::string(kNodeViewSchema)) {
    out.error = std::string("the node view's schema is not ") + kNodeViewSchema;
    return out;
  }
  Reader r;
  NodeView view;
  view.witness = r.text(doc, "witness", "node_view").value_or("");
  view.unix_ms = common::json_int(doc, "unix_ms").value_or(0);
  view.complete = r.boolean(doc, "complete", "node_view").value_or(false);
  view.note = r.text(doc, "note", "node_view").value_or("");
  if (const auto* list = common::json_array(doc, "containers")) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      if (i == kMaxNodeViewContainers) {
        r.problems.push_back("node_view.containers: more than " + std::to_string(kMaxNodeViewContainers));
        view.complete = false;
        break;
      }
      const std::string where = "node_view.containers[" + std::to_string(i) + "]";
      if (!(*list)[i].is_object()) {
        r.problems.push_back(where + ": not an object");
        continue;
      }
      view.containers.push_back(read_container(r, (*list)[i], where));
    }
  } else {
    r.problems.push_back("node_view.containers: missing or not a list");
    view.complete = false;
  }
  r.merge();
  out.problems = std::move(r.problems);
  out.view = std::move(view);
  return out;
}

NodeViewRead read_node_view(std::string_view text) {
  NodeViewRead out;
  if (text.size() > kMaxNodeViewBytes) {
    out.error = "the node view is larger than " + std::to_string(kMaxNodeViewBytes) + " bytes";
    return out;
  }
  bool too_deep = false;
  json doc = json::parse(
      text.begin(), text.end(),
      [&](int depth, json::parse_event_t, json&) {
        if (depth > kMaxNodeViewDepth) too_deep = true;
        return !too_deep;
      },
      false);
  if (too_deep) {
    out.error = "the node view is nested deeper than " + std::to_string(kMaxNodeViewDepth) + " levels";
    return out;
  }
  if (doc.is_discarded()) {
    out.error = "the node view is not JSON";
    return out;
  }
  return node_view_from_json(doc);
}

}  // namespace isoharness::deploy
