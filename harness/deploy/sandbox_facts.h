// What a backend records about a sandbox it deployed (docs/CONTRACTS.md, sandbox facts):
// the fields other modules read, typed, and everything else as `extra`, which only the
// result's readers see. `to_json` gives the result's "facts" object: the typed fields under
// their names (an empty string, a zero port or an absent optional is left out) over
// `extra`. `from_json` reads one back with typed readers that never throw: a member of the
// wrong type reads as absent and stays in `extra`, where a reader of the result sees it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/scenario/backend_kind.h"

namespace isoharness::deploy {

// The pod a deployment runs the agent's sandbox in, as the platform's status names it.
struct PodRef {
  std::string name;
  std::string namespace_;
};

// The node image a deployment profile declares (node_image:), where the node's runtime
// stack cannot be seen from inside a sandbox. Each version is upstream's word, each
// package a distribution's package version; "" when the profile declares none.
struct NodeImageFacts {
  std::string name;
  std::string runc_version;
  std::string runc_package;
  std::string containerd_version;
  std::string containerd_package;
  std::string crun_version;
  std::string crun_package;
  std::string runsc_version;
  std::string runsc_package;
  std::string nvidia_container_toolkit_version;
  std::string nvidia_container_toolkit_package;
};

// The item's own resolver (local backend): its address, the name that answers with this
// attempt's instance, and whether the agent's service may ask it.
struct ItemResolverFacts {
  std::string address;
  std::string instance_name;
  std::string instance;
  long long answers = 0;
  bool agent_may_ask = true;
};

struct SandboxFacts {
  std::optional<scenario::BackendKind> backend;  // absent: a record that names none (or no known one)
  std::string runtime;                           // "runc" / "runsc" where the backend ran it
  std::string runtime_binary;                    // the runtime's binary as run
  std::string runtime_version;                   // its --version line(s), as the backend read them
  std::string item_id;
  std::string service;            // the item's service this sandbox is ("default": the agent's)
  std::string address;            // the sandbox's own IPv4 address where the backend knows it
  std::string address6;           // and its IPv6 address
  int port = 0;                   // a sibling's listener port; 0 none
  std::vector<std::string> exec;  // argv prefix running a command inside it; empty: no way in
  std::string probe;              // isoprobe's path inside it
  std::string seen_in;            // a sibling known only by name: where it was seen
  std::string node_class;
  std::string node_name;            // the node the platform placed it on, where its status says
  std::optional<int> egress_index;  // the local world's drop point for it
  std::optional<PodRef> sandbox_pod;
  std::optional<NodeImageFacts> node_image;
  std::optional<ItemResolverFacts> item_resolver;
  std::vector<std::string> test_weakenings;
  // The item's other services, each its own sandbox (agent sandboxes only; nullopt: the
  // backend does not list them).
  std::optional<std::vector<SandboxFacts>> siblings;
  nlohmann::json extra = nlohmann::json::object();

  const std::vector<SandboxFacts>& sibling_list() const;
  nlohmann::json to_json() const;
  static SandboxFacts from_json(const nlohmann::json& j);
};

}  // namespace isoharness::deploy
