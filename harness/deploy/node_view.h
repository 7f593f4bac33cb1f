// The node's view of a sandbox (`isoharness.node-view/v1`, docs/CONTRACTS.md §4.8): per
// container, what the machine it runs on sees of it from outside — which runtime runs it
// (from the process tree and the runtime's own state, never from a name), the confinement
// of its init process as the node's /proc shows it (or, under gVisor, the spec the runtime
// was handed and the sentry's own confinement), its namespaces against the node's, its
// mounts and its devices. Posture checks pass only when this view and the sandbox's own
// report both agree with the plan (verify's node verdict rule).
//
// Every field that was not seen is absent (std::nullopt): an absent fact makes the check
// that needs it `unwitnessed`, never a pass. The reader takes hostile text (a node agent's
// answer, a file): it never throws, is bounded in size, and a member of the wrong type
// reads as absent and is listed among the problems.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isoharness::deploy {

inline constexpr const char* kNodeViewSchema = "isoharness.node-view/v1";
inline constexpr std::size_t kMaxNodeViewBytes = 4u << 20;  // a bigger document is not read
inline constexpr std::size_t kMaxNodeViewContainers = 64;
inline constexpr std::size_t kMaxNodeViewList = 512;   // entries kept of any one list
inline constexpr std::size_t kMaxNodeViewText = 4096;  // bytes kept of any one string
inline constexpr int kMaxNodeViewDepth = 16;           // a deeper document is not read

enum class NodeRuntime { unknown, runc, runsc };
const char* node_runtime_name(NodeRuntime runtime);    // "unknown", "runc", "runsc"
NodeRuntime node_runtime_from(std::string_view name);  // unknown for anything else

// Whether the container is in the node's own namespace of each kind (true: it shares the
// node's; false: its own). nullopt: not seen.
struct NodeNamespaces {
  std::optional<bool> pid, net, ipc, uts, mnt, user, cgroup;
};

// One line of a uid_map / gid_map: `count` ids from `inside` map to `outside` on the node.
struct NodeIdRange {
  long long inside = 0;
  long long outside = 0;
  long long count = 0;
};

// The confinement of one process: the container's init process read from the node's
// /proc (`source` "proc"), or the process its runtime spec describes ("spec").
struct NodeConfinement {
  std::optional<std::uint64_t> cap_eff, cap_prm, cap_bnd, cap_amb;
  std::optional<bool> no_new_privs;
  std::optional<int> seccomp_mode;     // 0 none, 1 strict, 2 filter
  std::optional<int> seccomp_filters;  // filters installed (Seccomp_filters:)
  std::optional<long long> uid, gid;   // in the container's own user namespace
  std::vector<NodeIdRange> uid_map, gid_map;
  NodeNamespaces shares_node;
};

// One mount of the container as the node sees it (its mountinfo, or the spec's mounts).
struct NodeMount {
  std::string destination;  // inside the container
  std::string source;       // the node's path (a bind) or the filesystem's source
  std::string fstype;
  bool read_only = false;
  bool bind = false;  // a bind of a node path (its root within the filesystem is not "/")
};

// The container's filesystem as the node sees it. A list that is absent was not seen; an
// empty one was seen and holds nothing.
struct NodeFilesystem {
  std::optional<bool> root_read_only;
  std::optional<std::vector<std::string>> host_paths;              // "<node path> -> <destination>"
  std::optional<std::vector<std::string>> masked_paths;            // /proc and /sys paths masked
  std::optional<std::vector<std::string>> read_only_paths;         // /proc paths mounted read-only
  std::optional<std::vector<std::string>> runtime_sockets;         // container-runtime sockets bound in
  std::optional<std::vector<std::string>> service_account_tokens;  // service-account token mounts
  std::optional<bool> cgroup_writable;                             // a cgroup filesystem mounted writable
  std::optional<bool> proc_sys_read_only;                          // /proc/sys on a read-only mount
  std::optional<bool> debugfs_mounted;                             // debugfs (or /sys/kernel/debug) reachable
  std::optional<bool> sysrq_present;  // the node's kernel has /proc/sysrq-trigger at all
  std::vector<NodeMount> mounts;      // what the summary above was made from, bounded
};

// What the node sees of a gVisor sandbox beside the spec: the flags runsc runs with (from
// the sandbox process's command line), the sentry's own confinement on the host, and
// whether any process of the sandbox is a host process besides the sentry and gofer.
struct NodeGvisor {
  std::optional<std::string> platform;  // --platform (ptrace, kvm, systrap)
  std::optional<std::string> network;   // --network (sandbox, host, none)
  std::optional<bool> nvproxy, net_raw, oci_seccomp;
  std::optional<int> sentry_pid;
  NodeConfinement sentry;
  std::optional<bool> processes_hidden;     // true: only runsc's own processes run on the host
  std::vector<std::string> host_processes;  // "<pid> <comm>" of the sandbox's host processes
};

struct NodeContainer {
  std::string id;       // the runtime's container id
  std::string service;  // the item's service ("default" is the agent's)
  NodeRuntime runtime = NodeRuntime::unknown;
  std::string runtime_evidence;  // how the runtime was found, for people
  std::optional<int> init_pid;   // the container's init process on the node
  std::string source;            // "proc" or "spec": where `process` was read
  NodeConfinement process;
  NodeFilesystem filesystem;
  std::optional<std::vector<std::string>> devices;  // device nodes beyond the standard set
  std::optional<NodeGvisor> gvisor;                 // runsc only
  std::optional<int> kptr_restrict;                 // the node's kernel.kptr_restrict
  std::vector<std::string> problems;                // what could not be read, for people
};

struct NodeView {
  std::string witness;  // who saw it ("local node /proc", "node agent on <node>")
  long long unix_ms = 0;
  std::vector<NodeContainer> containers;
  bool complete = true;  // false: nothing may be judged on it (unreadable, cut short)
  std::string note;      // why not complete
};

// The container of `service` ("default": the agent's), or nullptr.
const NodeContainer* node_container(const NodeView& view, std::string_view service = "default");

// The standard device nodes of a container (the OCI runtime's defaults and /dev/pts etc.);
// a device beyond these is a host device.
bool standard_device(std::string_view name);

nlohmann::json to_json(const NodeView& view);
std::string write_node_view(const NodeView& view);  // to_json, dumped

// The result of reading a document: the view when its schema is right, and every problem
// seen (a member of the wrong type, a list cut at its bound). `error` is set when nothing
// could be read (not JSON, too big, not this schema); `view` is then nullopt.
struct NodeViewRead {
  std::optional<NodeView> view;
  std::vector<std::string> problems;
  std::string error;
};
NodeViewRead read_node_view(std::string_view text);
NodeViewRead node_view_from_json(const nlohmann::json& doc);

}  // namespace isoharness::deploy
