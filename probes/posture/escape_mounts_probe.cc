// escape_mounts: the mounts the published container escapes use (docs/SECURITY.md,
// "Escape classes"), read from /proc/self/mountinfo only; nothing is written or mounted.
// - host_mounts: mounts of a disk, network or host-device filesystem other than "/" (a
//   hostPath volume, a bind of the node's files); verify compares them with the plan;
// - proc_sys_read_only: whether the mount /proc/sys sits on is read-only (containerd
//   binds it read-only; procMount Unmasked or privileged leaves it writable to root);
// - cgroup_writable_mounts: cgroup mounts that are not read-only (a root process could
//   then write release_agent or move itself between cgroups), and whether a v1
//   release_agent file is visible.
#include <unistd.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "probes/core/file_read.h"
#include "probes/core/probe.h"
#include "probes/core/probe_support.h"
#include "probes/core/text_util.h"

namespace isoprobe {

namespace {

constexpr std::size_t kMaxListed = 64;

// Filesystems whose files live on the node (or beyond it): a mount of one of these is a
// piece of the node's storage in the sandbox.
bool host_backed(std::string_view fstype) {
  static constexpr std::string_view kHost[] = {
      "ext2",     "ext3", "ext4",     "xfs",      "btrfs",   "zfs",     "f2fs",     "jfs",
      "reiserfs", "vfat", "exfat",    "ntfs",     "ntfs3",   "nfs",     "nfs4",     "cifs",
      "smb3",     "9p",   "virtiofs", "squashfs", "iso9660", "overlay", "devtmpfs", "hostfs"};
  if (fstype.substr(0, 4) == "fuse") return true;
  return std::find(std::begin(kHost), std::end(kHost), fstype) != std::end(kHost);
}

// The mount a path lies on: the longest mount point that is a prefix of it (the last one
// listed wins, as the kernel stacks later mounts on top).
const MountEntry* mount_of(const MountInfo& info, const std::string& path) {
  const MountEntry* best = nullptr;
  for (const auto& m : info.mounts) {
    const std::string& mp = m.mount_point;
    bool covers = mp == "/" || path == mp || path.rfind(mp + "/", 0) == 0;
    if (covers && (!best || mp.size() >= best->mount_point.size())) best = &m;
  }
  return best;
}

nlohmann::json host_mounts(const MountInfo& info, Evidence& ev) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : info.mounts) {
    if (m.mount_point == "/" || !host_backed(m.fstype)) continue;
    ev.add_line("host-backed mount: " + m.mount_point + " " + m.fstype + " root=" + m.root +
                (m.read_only() ? " ro" : " rw"));
    if (out.size() < kMaxListed)
      out.push_back({{"mount_point", m.mount_point.substr(0, 256)},
                     {"fstype", m.fstype.substr(0, 32)},
                     {"root", m.root.substr(0, 256)},
                     {"read_only", m.read_only()}});
  }
  return out;
}

nlohmann::json writable_cgroup_mounts(const MountInfo& info, Evidence& ev) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : info.mounts) {
    if (m.fstype != "cgroup" && m.fstype != "cgroup2") continue;
    ev.add_line("cgroup mount: " + m.mount_point + " " + m.fstype + (m.read_only() ? " ro" : " rw"));
    if (!m.read_only() && out.size() < kMaxListed) out.push_back(m.mount_point.substr(0, 256));
  }
  return out;
}

// A v1 hierarchy's release_agent (the root of each hierarchy has one).
bool release_agent_visible(const MountInfo& info, bool& writable) {
  bool seen = false;
  writable = false;
  for (const auto& m : info.mounts) {
    if (m.fstype != "cgroup") continue;
    const std::string path = m.mount_point + "/release_agent";
    if (!path_exists(path)) continue;
    seen = true;
    writable = writable || ::access(path.c_str(), W_OK) == 0;
  }
  return seen;
}

Observation observe_escape_mounts(Context&) {
  Observation o;
  Evidence ev;
  MountTable table = read_mount_table();
  if (table.err) return o.fail("cannot read /proc/self/mountinfo", table.err);
  const MountEntry* proc_sys = mount_of(table.info, "/proc/sys");
  const bool proc_sys_ro = proc_sys && proc_sys->read_only();
  ev.add_line("/proc/sys lies on " +
              (proc_sys ? proc_sys->mount_point + " " + proc_sys->fstype : "no mount") +
              (proc_sys_ro ? " (read-only)" : " (writable mount)"));
  bool agent_writable = false;
  const bool agent = release_agent_visible(table.info, agent_writable);
  ev.add_line(std::string("release_agent: ") + (agent ? "visible" : "not visible") +
              (agent_writable ? ", writable by this user" : ""));
  o.value = {{"host_mounts", host_mounts(table.info, ev)},
             {"proc_sys_read_only", proc_sys_ro},
             {"cgroup_writable_mounts", writable_cgroup_mounts(table.info, ev)},
             {"release_agent_visible", agent},
             {"release_agent_writable", agent_writable}};
  o.evidence = ev.str();
  return o;
}

}  // namespace

ProbeDescriptor escape_mounts_probe() {
  return {"escape_mounts", "host-backed mounts, /proc/sys and cgroup mounts (mountinfo only)",
          std::chrono::milliseconds(1000), observe_escape_mounts};
}

}  // namespace isoprobe
