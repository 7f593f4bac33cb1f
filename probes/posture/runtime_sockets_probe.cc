// runtime_sockets: container-runtime API sockets (docker, containerd, CRI-O, podman)
// at their usual paths, and mounts whose path names one of them.
#include <sys/stat.h>

#include <string>
#include <vector>

#include "probes/core/probe.h"
#include "probes/core/probe_support.h"
#include "probes/core/text_util.h"

namespace isoprobe {

namespace {

const std::vector<std::string> kPaths = {
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/containerd/containerd.sock",
    "/var/run/containerd/containerd.sock",
    "/run/k3s/containerd/containerd.sock",
    "/run/crio/crio.sock",
    "/var/run/crio/crio.sock",
    "/run/podman/podman.sock",
    "/var/run/dockershim.sock",
    "/run/dockershim.sock",
};
const std::vector<std::string_view> kSocketNames = {"docker.sock", "containerd.sock", "crio.sock",
                                                    "podman.sock", "dockershim.sock"};

bool names_runtime_socket(std::string_view path) {
  for (auto n : kSocketNames) {
    if (path.size() >= n.size() && path.substr(path.size() - n.size()) == n) return true;
  }
  return false;
}

Observation observe_runtime_sockets(Context&) {
  Observation o;
  std::vector<std::string> found;
  Evidence ev;
  for (const auto& p : kPaths) {
    struct stat st;
    if (::lstat(p.c_str(), &st) == 0) {
      bool sock = S_ISSOCK(st.st_mode);
      ev.add_line(p + (sock ? ": socket" : ": exists, not a socket"));
      if (sock) found.push_back(p);
    }
  }
  MountTable mounts = read_mount_table();
  for (const auto& m : mounts.info.mounts) {
    if (names_runtime_socket(m.mount_point) || names_runtime_socket(m.root)) {
      found.push_back("mount:" + m.mount_point);
      ev.add_line("mountinfo: " + m.root + " on " + m.mount_point + " (" + m.fstype + ")");
    }
  }
  if (found.empty()) ev.add_line("no runtime socket at the usual paths or in mountinfo");
  o.value = {{"found", found}};
  o.evidence = ev.str();
  if (mounts.err) o.err = mounts.err;
  return o;
}

}  // namespace

ProbeDescriptor runtime_sockets_probe() {
  return {"runtime_sockets", "docker/containerd/CRI-O sockets at usual paths and in mountinfo",
          std::chrono::milliseconds(1000), observe_runtime_sockets};
}

}  // namespace isoprobe
