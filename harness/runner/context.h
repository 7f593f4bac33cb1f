// The context block that opens every result document: where and with what it ran.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "harness/scenario/backend_kind.h"

namespace isoharness::scenario {
struct DeploymentProfile;
}

namespace isoharness::runner {

// Host, kernel, CPU count and frequency scaling, tool version and git revision, and the
// versions of runc and runsc on PATH (or "absent"). Backend facts are merged by the caller.
nlohmann::json host_context();

// host_context() plus when the run started, its backend and deployment profile. On any
// backend but local the harness host's runtime versions and kernel are moved under
// harness_host and the top-level keys are the profile's declared ones or null
// (separate_harness_host, parity_provenance.h): the context is the deployment's.
nlohmann::json run_context(scenario::BackendKind backend, const std::string& deployment_path,
                           const scenario::DeploymentProfile* profile);

// ISO 8601 UTC time of now, e.g. "2026-11-29T12:00:00Z".
std::string utc_now();

}  // namespace isoharness::runner
