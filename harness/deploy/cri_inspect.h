// What `crictl inspect ID` prints for a container (docs/CONTRACTS.md §4.9.1): the CRI's
// ContainerStatus under `status` and, from containerd's CRI plugin, its verbose info under
// `info` (the container's `pid` on the node and the OCI `runtimeSpec` it was created with).
// The node agent (`isoharness node-view`) resolves a container through it. The text comes
// from the node's runtime, about a container the sandbox controls: the reader never throws,
// is bounded, and a member of the wrong type reads as absent.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "harness/common/expected.h"

namespace isoharness::deploy {

inline constexpr std::size_t kMaxCriInspectBytes = std::size_t{4} << 20;

struct CriContainer {
  std::string id;             // status.id
  std::string name;           // status.metadata.name (the pod spec's container name)
  std::string state;          // status.state, e.g. CONTAINER_RUNNING
  std::string pod_uid;        // status.labels["io.kubernetes.pod.uid"]
  std::string pod_name;       // status.labels["io.kubernetes.pod.name"]
  std::string pod_namespace;  // status.labels["io.kubernetes.pod.namespace"]
  std::string sandbox_id;     // info.sandboxID
  std::string runtime_type;   // info.runtimeType, e.g. io.containerd.runsc.v1 (evidence only)
  std::optional<int> pid;     // info.pid: the container's task on the node (> 0)
  std::optional<nlohmann::json> runtime_spec;  // info.runtimeSpec: the OCI spec, an object
};

Expected<CriContainer> read_crictl_inspect(std::string_view text);

}  // namespace isoharness::deploy
