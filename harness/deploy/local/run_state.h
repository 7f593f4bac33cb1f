// Where a run keeps its state, how its host objects are named, and how a crashed run is
// removed. Everything a run creates carries its id: namespaces `ih-<run>-…`, the host's
// veth `ih-<run>`, containers `ih-<run>-…` under the run's own runc/runsc --root, the nft
// table `ih_<run>`, cgroups `/ih-<run>-…`, and the directory <state_root>/<run>/.
// Cleanup acts only on runs recorded under the state root, so it never touches what
// another tool (or another helper using the same prefix) created.
#pragma once

#include <string>
#include <vector>

#include "harness/deploy/local/oci_runtime.h"

namespace isoharness::deploy::local {

inline constexpr const char* kDefaultStateRoot = "/run/isoharness";

struct RunPaths {
  std::string state_root;
  std::string run_id;

  std::string dir() const { return state_root + "/" + run_id; }
  std::string world_dir() const { return dir() + "/world"; }
  std::string sandbox_dir(const std::string& name) const { return dir() + "/sandboxes/" + name; }
  std::string runtime_root(OciRuntime runtime) const { return dir() + "/" + oci_runtime_name(runtime); }
};

bool valid_run_id(const std::string& id);          // [a-z0-9]{1,8}
bool valid_sandbox_name(const std::string& name);  // [a-z0-9-]{1,24}, not starting with '-'
std::string new_run_id();                          // 8 random [a-z0-9]

std::string netns_name(const std::string& run_id, const std::string& role);    // "ih-<run>-<role>"
std::string host_iface_name(const std::string& run_id);                        // "ih-<run>"
std::string container_id(const std::string& run_id, const std::string& name);  // "ih-<run>-<name>.c"

// Creates the run directory and records this process as its owner (pid + start time).
// Throws InfraError if the run already exists.
void claim_run(const RunPaths& paths);

// True when the run's recorded owner process is still alive.
bool run_owner_alive(const RunPaths& paths);

struct CleanupReport {
  std::vector<std::string> removed;   // human-readable: "netns ih-abc-node", ...
  std::vector<std::string> problems;  // what could not be removed, and why
  std::vector<std::string> skipped;   // runs left alone (owner alive)
  bool ok() const { return problems.empty(); }
};

// Removes every trace of one run: containers (both runtimes), processes in its
// namespaces, namespaces, the host veth, mounts and cgroups under its names, its
// directory. Idempotent; never throws.
CleanupReport cleanup_run(const std::string& state_root, const std::string& run_id);

// Cleans every run recorded under the state root whose owner is gone (or all of them
// with include_live).
CleanupReport cleanup_all(const std::string& state_root, bool include_live = false);

// Recorded run ids under the state root.
std::vector<std::string> recorded_runs(const std::string& state_root);

}  // namespace isoharness::deploy::local
