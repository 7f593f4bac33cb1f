// What `isoharness local up` leaves in its run's state for each sandbox it holds up, so that
// `isoharness check` of that sandbox (reached only by its ssh line) can find which run and
// which containers it is, and read the node's view of them as `run` does.
//
//   <state>/<run>/up/sandboxes/<name>.json   (0644, written whole; removed at teardown)
//   {"run_id", "name", "jump": {host, port, user, host_key}, "sandbox": {…},
//    "containers": [{"service": "default", "id": "ih-<run>-<name>.c"}, …],
//    "world": {"address": "10.…", "address6": "fd…", "egress_index": 3}}
//
// A record is believed only while its run's owner lives (run_state.h) and only when the
// route it names is the one asked about, host keys included where both sides know them:
// a sandbox not found so gets no node view, never a guessed one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/deploy/local/node_observer.h"
#include "harness/deploy/local/run_state.h"
#include "harness/transport/ssh_route.h"

namespace isoharness::deploy::local {

struct UpContainer {
  std::string service;  // "default" is the agent's
  std::string id;       // the runtime's container id
};

// One sandbox of a local world as the world's witnesses know it.
struct WorldSandbox {
  std::string address, address6;    // its own addresses: what the arrival witness logs as source
  std::optional<int> egress_index;  // its drop point
};

struct UpRecord {
  std::string run_id;
  std::string name;
  transport::SshRoute route;
  std::vector<UpContainer> containers;
  WorldSandbox world;  // for the world's witnesses (local_backend.h read_world_witness)
};

std::string up_records_dir(const RunPaths& paths);  // <state>/<run>/up/sandboxes
nlohmann::json to_json(const UpRecord& record);
// nullopt (with why) for a document that is not a record.
std::optional<UpRecord> parse_up_record(const std::string& text, std::string& why);
// Throws InfraError when it cannot be written.
void write_up_record(const RunPaths& paths, const UpRecord& record);
void remove_up_record(const RunPaths& paths, const std::string& name) noexcept;

// The record of the `local up` sandbox `route` leads to, among the live runs under
// state_root: found only when exactly one record's jumphost and sandbox (host, port, user)
// are the route's and no host key the route pins differs from the record's. `note` says
// what was found, or why nothing was.
struct UpSandboxFound {
  std::optional<UpRecord> record;
  std::string note;
};
UpSandboxFound find_up_sandbox(const std::string& state_root, const transport::SshRoute& route);

// Where the node observer looks for a container of run `paths` (its own runc/runsc roots).
ContainerRef run_container_ref(const RunPaths& paths, const std::string& id, const std::string& service);
// The record's containers, each under its run's runtime roots.
std::vector<ContainerRef> container_refs(const std::string& state_root, const UpRecord& record);

}  // namespace isoharness::deploy::local
