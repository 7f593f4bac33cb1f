// The local backend's node view (deploy/node_view.h): what this machine sees, from its own
// /proc and the runtimes' state, of a container the backend started. Read after the probe
// ran. The parsers take the text of one file and never throw; observe_container does the
// reading (a runtime's `state` through run_command, /proc under `proc_root`).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/deploy/node_view.h"

namespace isoharness::deploy::local {

// /proc/PID/status: the capability sets, NoNewPrivs, Seccomp, Seccomp_filters and the
// effective Uid/Gid (as the reader's namespace sees them) into `out`; lines it does not
// know are skipped, a known line that does not parse leaves its field absent.
void parse_status_text(std::string_view text, NodeConfinement& out);

// /proc/PID/uid_map or gid_map; empty when any line is malformed.
std::vector<NodeIdRange> parse_id_map_text(std::string_view text);

// The id `outside` (as the node sees it) inside the container, through its map; nullopt
// when the map does not cover it. An empty map is the identity.
std::optional<long long> id_inside(const std::vector<NodeIdRange>& map, long long outside);

// /proc/PID/mountinfo as mounts (at most kMaxNodeViewList; `cut` is set when there were
// more). Paths are unescaped (\040 and friends).
std::vector<NodeMount> parse_mountinfo_text(std::string_view text, bool& cut);

// What a container's mounts say of its filesystem (root read-only, host paths, masked and
// read-only /proc paths, runtime sockets, service-account tokens, cgroup and /proc/sys
// writability, debugfs), the same classes isoprobe reads from inside.
NodeFilesystem summarise_mounts(const std::vector<NodeMount>& mounts);

// What `runc state` / `runsc state` print: the status, the init or sandbox process and
// the bundle. nullopt when it is not such a document.
struct RuntimeState {
  std::string status;
  int pid = 0;
  std::string bundle;
};
std::optional<RuntimeState> parse_runtime_state(std::string_view text);

// The runsc flags from a sandbox process's command line (arguments separated by NUL).
NodeGvisor parse_runsc_cmdline(std::string_view cmdline);

// The container as its OCI spec (config.json) describes it: the process's confinement,
// namespaces (one with no path is the container's own; one with a path the node's own is
// shared), mounts and devices. `oci_seccomp`: whether the runtime applies the spec's
// seccomp filter at all (runsc only with --oci-seccomp).
void read_spec(const nlohmann::json& config, bool oci_seccomp, NodeContainer& out);

// Where to look for one container.
struct ContainerRef {
  std::string id;
  std::string service;  // "default" is the agent's
  std::string runc_bin, runc_root;
  std::string runsc_bin, runsc_root;
  std::string proc_root = "/proc";
};

// Everything the node sees of the container. Never throws; what could not be read is
// absent and named in `problems`.
NodeContainer observe_container(const ContainerRef& ref);

}  // namespace isoharness::deploy::local

namespace isoharness::deploy::local {

// The view of several containers (an item's agent and siblings), stamped now.
NodeView observe_containers(const std::vector<ContainerRef>& refs);

}  // namespace isoharness::deploy::local
