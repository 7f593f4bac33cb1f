#include "harness/deploy/local/node_observer.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "harness/common/capability_table.h"
#include "harness/common/json_read.h"
#include "harness/common/subprocess.h"
#include "harness/deploy/local/host_ops.h"

namespace isoharness::deploy::local {
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const auto at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  for (auto w : split(s, ' '))
    for (auto t : split(w, '\t'))
      if (!t.empty()) out.push_back(t);
  return out;
}

std::optional<std::uint64_t> hex_of(std::string_view s) {
  if (s.empty() || s.size() > 16) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    int d = (c >= '0' && c <= '9')   ? c - '0'
            : (c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                     : -1;
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<std::uint64_t>(d);
  }
  return v;
}

std::optional<long long> int_of(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

void parse_status_text(std::string_view text, NodeConfinement& out) {
  for (auto line : split(text, '\n')) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const auto key = line.substr(0, colon);
    const auto value = trim(line.substr(colon + 1));
    if (key == "CapEff")
      out.cap_eff = hex_of(value);
    else if (key == "CapPrm")
      out.cap_prm = hex_of(value);
    else if (key == "CapBnd")
      out.cap_bnd = hex_of(value);
    else if (key == "CapAmb")
      out.cap_amb = hex_of(value);
    else if (key == "NoNewPrivs") {
      const auto v = int_of(value);
      out.no_new_privs = v && *v <= 1 ? std::optional<bool>(*v == 1) : std::nullopt;
    } else if (key == "Seccomp") {
      const auto v = int_of(value);
      out.seccomp_mode = v && *v <= 2 ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
    } else if (key == "Seccomp_filters") {
      const auto v = int_of(value);
      out.seccomp_filters = v && *v < 1 << 20 ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
    } else if (key == "Uid" || key == "Gid") {
      const auto ids = words(value);
      const auto effective = ids.size() == 4 ? int_of(ids[1]) : std::nullopt;
      (key == "Uid" ? out.uid : out.gid) = effective;
    }
  }
}

std::vector<NodeIdRange> parse_id_map_text(std::string_view text) {
  std::vector<NodeIdRange> out;
  for (auto line : split(text, '\n')) {
    if (trim(line).empty()) continue;
    const auto w = words(line);
    const auto a = w.size() == 3 ? int_of(w[0]) : std::nullopt;
    const auto b = w.size() == 3 ? int_of(w[1]) : std::nullopt;
    const auto c = w.size() == 3 ? int_of(w[2]) : std::nullopt;
    if (!a || !b || !c || out.size() == kMaxNodeViewList) return {};
    out.push_back({*a, *b, *c});
  }
  return out;
}

std::optional<long long> id_inside(const std::vector<NodeIdRange>& map, long long outside) {
  if (map.empty()) return outside;
  for (const auto& r : map)
    if (outside >= r.outside && outside - r.outside < r.count) return r.inside + (outside - r.outside);
  return std::nullopt;
}

namespace {

std::string unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() + 0 && i + 3 <= s.size() - 0) {
      const auto oct = s.substr(i + 1, 3);
      if (oct.size() == 3 &&
          std::all_of(oct.begin(), oct.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out += static_cast<char>((oct[0] - '0') * 64 + (oct[1] - '0') * 8 + (oct[2] - '0'));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

bool has_option(std::string_view options, std::string_view name) {
  for (auto o : split(options, ','))
    if (o == name) return true;
  return false;
}

}  // namespace

// 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
std::vector<NodeMount> parse_mountinfo_text(std::string_view text, bool& cut) {
  std::vector<NodeMount> out;
  cut = false;
  for (auto line : split(text, '\n')) {
    const auto w = words(line);
    auto dash = std::find(w.begin(), w.end(), std::string_view("-"));
    if (w.size() < 10 || dash == w.end() || w.end() - dash < 3 || dash - w.begin() < 6) continue;
    if (out.size() == kMaxNodeViewList) {
      cut = true;
      break;
    }
    NodeMount m;
    m.destination = unescape(w[4]);
    m.fstype = std::string(*(dash + 1));
    m.source = unescape(*(dash + 2));
    m.read_only = has_option(w[5], "ro");
    m.bind = unescape(w[3]) != "/";
    if (m.bind) m.source = unescape(w[3]);  // the path within its filesystem: what was bound
    out.push_back(std::move(m));
  }
  return out;
}

namespace {

// Filesystems whose files live on the node (or beyond it), as isoprobe's escape_mounts
// counts them.
bool host_backed(std::string_view fstype) {
  static constexpr std::string_view kHost[] = {
      "ext2",     "ext3",     "ext4",    "xfs",     "btrfs",    "zfs",    "f2fs", "jfs",  "reiserfs",
      "vfat",     "exfat",    "ntfs",    "ntfs3",   "nfs",      "nfs4",   "cifs", "smb3", "9p",
      "virtiofs", "squashfs", "iso9660", "overlay", "devtmpfs", "hostfs", "bind"};
  if (fstype.substr(0, 4) == "fuse") return true;
  return std::find(std::begin(kHost), std::end(kHost), fstype) != std::end(kHost);
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

bool runtime_socket(std::string_view path) {
  for (auto n : {"docker.sock", "containerd.sock", "crio.sock", "podman.sock", "dockershim.sock"})
    if (ends_with(path, n)) return true;
  return false;
}

bool under(std::string_view path, std::string_view dir) {
  return path == dir ||
         (path.size() > dir.size() && path.substr(0, dir.size()) == dir && path[dir.size()] == '/');
}

// The mount a path lies on: the last listed mount whose point is the longest prefix.
const NodeMount* mount_of(const std::vector<NodeMount>& mounts, std::string_view path) {
  const NodeMount* best = nullptr;
  for (const auto& m : mounts)
    if (under(path, m.destination) || m.destination == "/")
      if (!best || m.destination.size() >= best->destination.size()) best = &m;
  return best;
}

}  // namespace

NodeFilesystem summarise_mounts(const std::vector<NodeMount>& mounts) {
  NodeFilesystem f;
  std::vector<std::string> host, masked, ro_paths, sockets, tokens;
  bool cgroup_rw = false, debugfs = false;
  for (const auto& m : mounts) {
    const auto& d = m.destination;
    if (d != "/" && host_backed(m.fstype)) host.push_back(d);
    if (runtime_socket(d) || runtime_socket(m.source)) sockets.push_back(d);
    if (under(d, "/var/run/secrets/kubernetes.io/serviceaccount") ||
        under(d, "/run/secrets/kubernetes.io/serviceaccount"))
      tokens.push_back(d);
    if ((m.fstype == "cgroup" || m.fstype == "cgroup2") && !m.read_only) cgroup_rw = true;
    if (m.fstype == "debugfs" || under(d, "/sys/kernel/debug")) debugfs = debugfs || m.fstype == "debugfs";
    if ((under(d, "/proc") || under(d, "/sys")) && d != "/proc" && d != "/sys") {
      if (m.source == "/null" || (m.fstype == "tmpfs" && m.read_only))
        masked.push_back(d);
      else if (m.read_only)
        ro_paths.push_back(d);
    }
  }
  if (const auto* root = mount_of(mounts, "/"); root && root->destination == "/")
    f.root_read_only = root->read_only;
  if (const auto* ps = mount_of(mounts, "/proc/sys");
      ps && under("/proc/sys", ps->destination) && ps->destination != "/")
    f.proc_sys_read_only = ps->read_only;
  f.host_paths = host;
  f.masked_paths = masked;
  f.read_only_paths = ro_paths;
  f.runtime_sockets = sockets;
  f.service_account_tokens = tokens;
  f.cgroup_writable = cgroup_rw;
  f.debugfs_mounted = debugfs;
  f.mounts = mounts;
  return f;
}

std::optional<RuntimeState> parse_runtime_state(std::string_view text) {
  if (text.size() > kMaxNodeViewBytes) return std::nullopt;
  const json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (!doc.is_object()) return std::nullopt;
  const auto pid = common::json_int(doc, "pid");
  const auto status = common::json_string(doc, "status");
  if (!pid || !status || *pid < 0 || *pid > 1 << 30) return std::nullopt;
  return RuntimeState{*status, static_cast<int>(*pid), common::json_string_or(doc, "bundle", "")};
}

NodeGvisor parse_runsc_cmdline(std::string_view cmdline) {
  NodeGvisor g;
  g.nvproxy = false;
  g.net_raw = false;
  g.oci_seccomp = false;
  for (auto arg : split(cmdline, '\0')) {
    if (arg.substr(0, 2) != "--") continue;
    arg.remove_prefix(2);
    const auto eq = arg.find('=');
    const auto name = arg.substr(0, eq);
    const std::string value = eq == std::string_view::npos ? "true" : std::string(arg.substr(eq + 1));
    if (name == "platform")
      g.platform = value;
    else if (name == "network")
      g.network = value;
    else if (name == "nvproxy")
      g.nvproxy = value == "true";
    else if (name == "net-raw")
      g.net_raw = value == "true";
    else if (name == "oci-seccomp")
      g.oci_seccomp = value == "true";
  }
  return g;
}

namespace {

std::optional<std::uint64_t> spec_caps(const json& caps, const char* key) {
  const auto* list = common::json_array(caps, key);
  if (!list) return std::nullopt;
  std::uint64_t mask = 0;
  for (const auto& c : *list) {
    if (!c.is_string()) return std::nullopt;
    const auto& name = c.get_ref<const std::string&>();
    const auto it = std::find(kCapabilityNames.begin(), kCapabilityNames.end(), name);
    if (it == kCapabilityNames.end()) return std::nullopt;
    mask |= 1ULL << (it - kCapabilityNames.begin());
  }
  return mask;
}

void read_spec_namespaces(const json& linux, NodeNamespaces& ns) {
  // A kind the spec does not list is shared with the runtime's own (the node's).
  std::map<std::string, std::optional<bool>*> kinds = {
      {"pid", &ns.pid},   {"network", &ns.net}, {"ipc", &ns.ipc},      {"uts", &ns.uts},
      {"mount", &ns.mnt}, {"user", &ns.user},   {"cgroup", &ns.cgroup}};
  for (auto& [kind, slot] : kinds) *slot = true;
  if (const auto* list = common::json_array(linux, "namespaces"))
    for (const auto& n : *list) {
      auto it = kinds.find(common::json_string_or(n, "type", ""));
      if (it == kinds.end()) continue;
      // A path joins an existing namespace: one the backend made (the sandbox's own
      // network namespace), never the node's, for the local backend's bundles.
      const auto path = common::json_string_or(n, "path", "");
      *it->second = path.rfind("/proc/1/", 0) == 0;
    }
}

}  // namespace

void read_spec(const json& config, bool oci_seccomp, NodeContainer& out) {
  const json& process = common::json_object(config, "process") ? config["process"] : json::object();
  const json& caps = common::json_object(process, "capabilities") ? process["capabilities"] : json::object();
  out.process.cap_eff = spec_caps(caps, "effective");
  out.process.cap_prm = spec_caps(caps, "permitted");
  out.process.cap_bnd = spec_caps(caps, "bounding");
  out.process.cap_amb = spec_caps(caps, "ambient");
  out.process.no_new_privs = common::json_bool(process, "noNewPrivileges").value_or(false);
  if (const auto* user = common::json_object(process, "user")) {
    out.process.uid = common::json_int(*user, "uid");
    out.process.gid = common::json_int(*user, "gid");
  }
  const json& linux = common::json_object(config, "linux") ? config["linux"] : json::object();
  out.process.seccomp_mode = oci_seccomp && common::json_object(linux, "seccomp") ? 2 : 0;
  read_spec_namespaces(linux, out.process.shares_node);
  std::vector<NodeMount> mounts;
  if (const auto* root = common::json_object(config, "root"))
    mounts.push_back({"/", common::json_string_or(*root, "path", ""), "root",
                      common::json_bool(*root, "readonly").value_or(false), false});
  if (const auto* list = common::json_array(config, "mounts"))
    for (const auto& m : *list) {
      const auto options = common::json_strings(m, "options");
      const bool bind = common::json_string_or(m, "type", "") == "bind" ||
                        std::count(options.begin(), options.end(), "bind") +
                                std::count(options.begin(), options.end(), "rbind") >
                            0;
      if (mounts.size() == kMaxNodeViewList) break;
      mounts.push_back({common::json_string_or(m, "destination", ""), common::json_string_or(m, "source", ""),
                        bind ? "bind" : common::json_string_or(m, "type", ""),
                        std::count(options.begin(), options.end(), "ro") > 0, bind});
    }
  out.filesystem = summarise_mounts(mounts);
  std::vector<std::string> devices;
  if (const auto* list = common::json_array(linux, "devices"))
    for (const auto& d : *list) {
      std::string path = common::json_string_or(d, "path", "");
      if (path.rfind("/dev/", 0) == 0) path = path.substr(5);
      if (!standard_device(path.substr(0, path.find('/'))) && devices.size() < kMaxNodeViewList)
        devices.push_back(path);
    }
  out.devices = devices;
}

// ---- reading this machine ---------------------------------------------------------------

namespace {

std::optional<std::string> read_text(const std::string& path, std::size_t max = 1 << 20) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(max, '\0');
  in.read(text.data(), static_cast<std::streamsize>(max));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

std::string link_of(const std::string& path) {
  char buf[512];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

std::optional<RuntimeState> ask_state(const std::string& bin, const std::string& root,
                                      const std::string& id) {
  if (bin.empty() || root.empty()) return std::nullopt;
  RunOptions opts;
  opts.deadline = 10s;
  opts.max_output = 1 << 16;
  auto r = run_command({bin, "--root", root, "state", id}, opts);
  if (!r || !r->ok()) return std::nullopt;
  return parse_runtime_state(r->out);
}

// The sandbox process runsc's own state file (<root>/<sandbox>_sandbox:<id>.state) names.
std::optional<long long> runsc_sandbox_pid(const std::string& root, const std::string& id) {
  std::optional<long long> pid;
  DIR* d = ::opendir(root.c_str());
  if (!d) return pid;
  const std::string tail = "_sandbox:" + id + ".state";
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() <= tail.size() || n.compare(n.size() - tail.size(), tail.size(), tail) != 0) continue;
    const json st = json::parse(read_text(root + "/" + n, 4 << 20).value_or(""), nullptr, false);
    if (const json* sb = common::json_member(st, "sandbox")) pid = common::json_int(*sb, "pid");
    break;
  }
  ::closedir(d);
  if (pid && (*pid <= 1 || *pid > 1 << 22)) pid.reset();
  return pid;
}

// runsc answers `state` through the sandbox's control socket, an abstract socket of the
// network namespace runsc runs in (the local backend starts it --network=host inside the
// sandbox's namespace): asked from another namespace it says "stopped", pid -1. So it is
// asked inside the network namespace of the sandbox process its own state file names (the
// node's own namespace when it runs there), and that answer is taken only when it names
// the same process; else, or when no state file names one, runsc is asked from here.
std::optional<RuntimeState> ask_runsc_state(const std::string& bin, const std::string& root,
                                            const std::string& id, const std::string& proc) {
  if (bin.empty() || root.empty()) return std::nullopt;
  const std::string nsenter = find_program("nsenter");
  if (const auto sandbox_pid = runsc_sandbox_pid(root, id); sandbox_pid && !nsenter.empty()) {
    RunOptions opts;
    opts.deadline = 10s;
    opts.max_output = 1 << 16;
    const std::string netns = proc + "/" + std::to_string(*sandbox_pid) + "/ns/net";
    auto r = run_command({nsenter, "--net=" + netns, "--", bin, "--root", root, "state", id}, opts);
    auto there = r && r->ok() ? parse_runtime_state(r->out) : std::nullopt;
    if (there && there->pid == *sandbox_pid) return there;
  }
  return ask_state(bin, root, id);
}

// Each namespace of `pid` against the node's (PID 1's; the harness's own where PID 1's
// cannot be read, as on a VM that hides it).
NodeNamespaces namespaces_of(const std::string& proc, int pid) {
  NodeNamespaces ns;
  auto one = [&](const char* kind) -> std::optional<bool> {
    const std::string mine = link_of(proc + "/" + std::to_string(pid) + "/ns/" + kind);
    std::string node = link_of(proc + "/1/ns/" + kind);
    if (node.empty()) node = link_of(proc + "/self/ns/" + kind);
    if (mine.empty() || node.empty()) return std::nullopt;
    return mine == node;
  };
  ns.pid = one("pid");
  ns.net = one("net");
  ns.ipc = one("ipc");
  ns.uts = one("uts");
  ns.mnt = one("mnt");
  ns.user = one("user");
  ns.cgroup = one("cgroup");
  return ns;
}

NodeConfinement confinement_of(const std::string& proc, int pid, std::vector<std::string>& problems) {
  NodeConfinement c;
  const std::string dir = proc + "/" + std::to_string(pid);
  if (auto status = read_text(dir + "/status"))
    parse_status_text(*status, c);
  else
    problems.push_back("cannot read " + dir + "/status");
  if (auto m = read_text(dir + "/uid_map")) c.uid_map = parse_id_map_text(*m);
  if (auto m = read_text(dir + "/gid_map")) c.gid_map = parse_id_map_text(*m);
  // The ids the node reads are the node's; inside the container they go through its maps.
  if (c.uid) c.uid = id_inside(c.uid_map, *c.uid);
  if (c.gid) c.gid = id_inside(c.gid_map, *c.gid);
  c.shares_node = namespaces_of(proc, pid);
  return c;
}

std::optional<std::vector<std::string>> devices_of(const std::string& proc, int pid) {
  DIR* d = ::opendir((proc + "/" + std::to_string(pid) + "/root/dev").c_str());
  if (!d) return std::nullopt;
  std::vector<std::string> out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == ".." || standard_device(name)) continue;
    if (out.size() == kMaxNodeViewList) break;
    out.push_back(name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// A runtime's socket inside a directory mounted in (a socket mounted by its directory,
// /run/containerd say): the node lists the top level of each mount but /, /proc, /sys and
// /dev through the container's root, bounded, and names every socket inode with a runtime socket's name.
// Entries are only lstat'ed, never followed, and nothing is read from them.
void add_sockets_in_bound_dirs(const std::string& root, NodeFilesystem& f,
                               std::vector<std::string>& problems) {
  constexpr std::size_t kMaxEntries =
      65536;                       // names read per directory; only runtime-named ones are lstat'ed
  if (!f.runtime_sockets) return;  // the mounts were not read: nothing to add to
  // A directory that could not be listed whole leaves runtime_sockets unknown (absent): the
  // runtime_socket check is then unwitnessed, never passed on a partial look.
  const auto unseen = [&](const std::string& what) {
    problems.push_back("runtime sockets: " + what);
    f.runtime_sockets.reset();
  };
  for (const auto& m : f.mounts) {
    const std::string& dest = m.destination;
    if (dest == "/" || under(dest, "/proc") || under(dest, "/sys") || under(dest, "/dev")) continue;
    const int fd = ::open((root + dest).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOTDIR) continue;  // a file mounted in (/etc/hosts, a socket itself): named by its point
      return unseen("cannot list " + dest + " (" + std::strerror(errno) + ")");
    }
    DIR* d = ::fdopendir(fd);
    if (!d) {
      ::close(fd);
      return unseen("cannot list " + dest);
    }
    std::size_t seen = 0;
    while (const dirent* e = ::readdir(d)) {
      if (++seen > kMaxEntries || f.runtime_sockets->size() >= kMaxNodeViewList) {
        ::closedir(d);
        return unseen(dest + " holds more entries than the node view reads");
      }
      struct stat st {};
      if (!runtime_socket(e->d_name) || ::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (S_ISSOCK(st.st_mode)) f.runtime_sockets->push_back(dest + "/" + e->d_name);
    }
    ::closedir(d);
  }
}

// Every process whose parent chain reaches `top`, with its command name and executable.
std::vector<int> descendants(const std::string& proc, int top) {
  std::map<int, int> parent;
  if (DIR* d = ::opendir(proc.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const auto pid = int_of(e->d_name);
      if (!pid || parent.size() > 65536) continue;
      auto stat = read_text(proc + "/" + e->d_name + "/stat", 4096);
      if (!stat) continue;
      const auto close = stat->rfind(')');
      if (close == std::string::npos) continue;
      const auto w = words(std::string_view(*stat).substr(close + 1));
      if (w.size() > 2)
        if (auto pp = int_of(w[1])) parent[static_cast<int>(*pid)] = static_cast<int>(*pp);
    }
    ::closedir(d);
  }
  std::vector<int> out;
  for (const auto& [pid, pp] : parent) {
    int at = pid;
    for (int hops = 0; hops < 64 && at > 1; ++hops, at = parent.count(at) ? parent[at] : 0)
      if (at == top) {
        out.push_back(pid);
        break;
      }
  }
  return out;
}

void observe_runc(const ContainerRef& ref, const RuntimeState& st, NodeContainer& c) {
  c.runtime = NodeRuntime::runc;
  c.runtime_evidence =
      "runc --root " + ref.runc_root + " state: " + st.status + ", init pid " + std::to_string(st.pid);
  c.init_pid = st.pid;
  c.source = "proc";
  c.process = confinement_of(ref.proc_root, st.pid, c.problems);
  const std::string dir = ref.proc_root + "/" + std::to_string(st.pid);
  if (auto mi = read_text(dir + "/mountinfo", 4 << 20)) {
    bool cut = false;
    c.filesystem = summarise_mounts(parse_mountinfo_text(*mi, cut));
    if (cut) c.problems.push_back("more mounts than the node view keeps");
  } else {
    c.problems.push_back("cannot read " + dir + "/mountinfo");
  }
  add_sockets_in_bound_dirs(dir + "/root", c.filesystem, c.problems);
  c.filesystem.sysrq_present = ::access((ref.proc_root + "/sysrq-trigger").c_str(), F_OK) == 0;
  c.devices = devices_of(ref.proc_root, st.pid);
  if (!c.devices) c.problems.push_back("cannot list " + dir + "/root/dev");
}

void observe_runsc(const ContainerRef& ref, const RuntimeState& st, NodeContainer& c) {
  c.runtime = NodeRuntime::runsc;
  c.runtime_evidence = "runsc --root " + ref.runsc_root + " state: " + st.status + ", sandbox pid " +
                       std::to_string(st.pid) + ", running runsc boot";
  c.source = "spec";
  const std::string dir = ref.proc_root + "/" + std::to_string(st.pid);
  NodeGvisor g = parse_runsc_cmdline(read_text(dir + "/cmdline", 1 << 16).value_or(""));
  g.sentry_pid = st.pid;
  g.sentry = confinement_of(ref.proc_root, st.pid, c.problems);
  const std::string exe = link_of(dir + "/exe");
  bool hidden = true;
  for (int pid : descendants(ref.proc_root, st.pid)) {
    const std::string sub = ref.proc_root + "/" + std::to_string(pid);
    const std::string sub_exe = link_of(sub + "/exe");
    if (sub_exe == exe && !exe.empty()) continue;
    hidden = false;
    if (g.host_processes.size() < kMaxNodeViewList)
      g.host_processes.push_back(std::to_string(pid) + " " +
                                 std::string(trim(read_text(sub + "/comm", 64).value_or("?"))));
  }
  g.processes_hidden = hidden;
  const auto config = read_text(st.bundle + "/config.json", 4 << 20);
  const json spec = config ? json::parse(*config, nullptr, false) : json();
  if (spec.is_object())
    read_spec(spec, g.oci_seccomp.value_or(false), c);
  else
    c.problems.push_back("cannot read the spec runsc was handed (" + st.bundle + "/config.json)");
  // The sandbox's network is the sentry's own namespace (runsc --network=host in it).
  c.process.shares_node.net = g.sentry.shares_node.net;
  c.gvisor = std::move(g);
}

bool runs_runsc_boot(const std::string& proc, int pid, const std::string& runsc_bin) {
  const std::string exe = link_of(proc + "/" + std::to_string(pid) + "/exe");
  char real[4096];
  const std::string bin = ::realpath(runsc_bin.c_str(), real) ? std::string(real) : runsc_bin;
  const auto cmdline = read_text(proc + "/" + std::to_string(pid) + "/cmdline", 1 << 16).value_or("");
  const auto args = split(cmdline, '\0');
  return !exe.empty() && exe == bin &&
         std::find(args.begin(), args.end(), std::string_view("boot")) != args.end();
}

}  // namespace

NodeContainer observe_container(const ContainerRef& ref) {
  NodeContainer c;
  c.id = ref.id;
  c.service = ref.service;
  // Both runtimes' own state is asked: the answer, with the process it names, decides.
  const auto runc = ask_state(ref.runc_bin, ref.runc_root, ref.id);
  const auto runsc =
      runc ? std::nullopt : ask_runsc_state(ref.runsc_bin, ref.runsc_root, ref.id, ref.proc_root);
  if (runc && runc->pid > 0 && !runs_runsc_boot(ref.proc_root, runc->pid, ref.runsc_bin)) {
    observe_runc(ref, *runc, c);
  } else if (runsc && runsc->pid > 0 && runs_runsc_boot(ref.proc_root, runsc->pid, ref.runsc_bin)) {
    observe_runsc(ref, *runsc, c);
  } else {
    c.runtime_evidence = "neither runc's nor runsc's state names a running process for " + ref.id;
    c.problems.push_back(c.runtime_evidence);
  }
  return c;
}

}  // namespace isoharness::deploy::local

namespace isoharness::deploy::local {

NodeView observe_containers(const std::vector<ContainerRef>& refs) {
  NodeView view;
  view.witness = "local node /proc and runtime state";
  view.unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  for (const auto& ref : refs) {
    if (view.containers.size() == kMaxNodeViewContainers) break;
    view.containers.push_back(observe_container(ref));
    if (auto k = read_text(ref.proc_root + "/sys/kernel/kptr_restrict", 64))
      if (auto v = int_of(trim(std::string_view(*k).substr(0, k->find('\n')))); v && *v <= 4)
        view.containers.back().kptr_restrict = static_cast<int>(*v);
  }
  return view;
}

}  // namespace isoharness::deploy::local
