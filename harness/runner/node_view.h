// What a sandbox sees of the node it landed on: the CPU model, the CPUs it may run on, the
// kernel's boot id and the kernel it is told it runs (under gVisor: gVisor's own). Parity
// records it per cell so a reader can tell that tier and non-tier cells really ran on
// different nodes (different boot ids, CPU models or CPU sets), also on a platform that
// does not say which node a pod is on. Under runc these are the node's. gVisor (as run
// here) has no boot_id file and no Cpus_allowed_list, names the CPU model "unknown" and
// reports its own kernel (4.4.0), but lists as many processors as its CPU set holds.
//
// Everything is read with fixed commands (`cat` of four /proc files) and comes from inside
// the sandbox: each text is bounded, and only printable ASCII of bounded length is kept.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "harness/runner/sandbox_channel.h"

namespace isoharness::runner {

struct NodeViewText {
  std::string cpuinfo;       // /proc/cpuinfo
  std::string status;        // /proc/self/status (of `cat`, which inherits the sandbox's affinity)
  std::string boot_id;       // /proc/sys/kernel/random/boot_id
  std::string version;       // /proc/version
  bool cpuinfo_cut = false;  // cpuinfo passed its cap: the processor count is a lower bound
};

// {cpu_model, cpus_listed, cpus_allowed, boot_id, kernel}; a value that cannot be read is
// null (never a guess).
nlohmann::json parse_node_view(const NodeViewText& text);

// Reads the four files in the sandbox. A file that cannot be read leaves its value null and
// names the file under "unreadable"; this never throws for what the sandbox answers.
nlohmann::json read_node_view(SandboxChannel& session);

}  // namespace isoharness::runner
