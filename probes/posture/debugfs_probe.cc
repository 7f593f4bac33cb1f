// debugfs: is /sys/kernel/debug there, and how much of it can we list?
#include <cerrno>

#include "probes/core/file_read.h"
#include "probes/core/probe.h"
#include "probes/core/probe_support.h"

namespace isoprobe {

namespace {

Observation observe_debugfs(Context&) {
  Observation o;
  int err = 0;
  MountTable mounts = read_mount_table();
  bool mounted = false;
  for (const auto& m : mounts.info.mounts) mounted = mounted || m.fstype == "debugfs";
  bool present = path_exists("/sys/kernel/debug", &err);
  if (!present) {
    o.value = {{"present", false}, {"entries", 0}, {"listable", false}, {"debugfs_mounted", mounted}};
    o.evidence = "/sys/kernel/debug: " + errno_name(err);
    return o;
  }
  DirList d = list_dir("/sys/kernel/debug", 4096);
  o.value = {
      {"present", true}, {"entries", d.names.size()}, {"listable", d.err == 0}, {"debugfs_mounted", mounted}};
  std::string names;
  for (std::size_t i = 0; i < d.names.size() && i < 40; ++i) names += d.names[i] + " ";
  o.evidence = "/sys/kernel/debug: " + (d.err ? "cannot list: " + errno_name(d.err) : names);
  return o;
}

}  // namespace

ProbeDescriptor debugfs_probe() {
  return {"debugfs", "/sys/kernel/debug present and listable", std::chrono::milliseconds(1000),
          observe_debugfs};
}

}  // namespace isoprobe
