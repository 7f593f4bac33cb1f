// Where a parity run's timings come from, as the parity section records it
// (section.provenance, docs/CONTRACTS.md §6) and as the history keeps it.
//
// The harness host is the node only on the local backend. On any other backend the versions
// of runc and runsc on the harness host, and its kernel, say nothing about the nodes that
// ran the sandboxes, so every run's context (run_context: run, check, parity, selftest)
// moves the context's runc, runsc, runsc_platform, runsc_network and kernel under
// context.harness_host and the top-level keys become the deployment's own (what the
// profile's `platform` block or its `node_image:` section declares) or null: the history,
// drift attribution and the reports then never present the harness host's versions as the
// platform's.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "harness/scenario/scenario.h"

namespace isoharness::runner {

// The profile's optional `platform` block, read typed: node_image (text) and
// runtime_versions (runtime name -> version text); anything else is ignored. Where it
// declares none, the `node_image:` section's name and runc_version (as runc).
struct DeclaredPlatform {
  std::string node_image;
  std::map<std::string, std::string> runtime_versions;
};
DeclaredPlatform declared_platform(const scenario::DeploymentProfile& profile);

// One cell's part: its node class, runtime class and OCI handler, and what its sandbox saw
// of its node (kernel, node name, boot id, CPUs); cell_details is the section's list.
// {backend, deployment, runtime: {name: version}, node_image, cells: {cell: {...}},
//  harness_host_versions_apply}
nlohmann::json parity_provenance(const scenario::DeploymentProfile& profile, scenario::BackendKind backend,
                                 const nlohmann::json& cell_details, const nlohmann::json& context);

// Moves the harness host's runtime versions out of the way for a non-local backend (above).
// Idempotent: a context that already has harness_host is left as it is.
void separate_harness_host(nlohmann::json& context, const scenario::DeploymentProfile& profile,
                           scenario::BackendKind backend);
void separate_harness_host(nlohmann::json& context, const DeclaredPlatform& declared,
                           scenario::BackendKind backend);

}  // namespace isoharness::runner
