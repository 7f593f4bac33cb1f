// Runs every probe of a list, each under its own deadline and all under the run's
// deadline, and builds the posture document (schema isoharness.posture/v1).
#pragma once

#include <nlohmann/json.hpp>
#include <span>

#include "probes/core/probe.h"

namespace isoprobe {

inline constexpr const char* kPostureSchema = "isoharness.posture/v1";

struct PostureRun {
  nlohmann::json document;
  // Probes that overran their deadline are left running on a detached thread; when
  // this is non-zero the caller must end the process with _exit after printing.
  int abandoned = 0;
};

// Each probe runs on its own thread; the runner waits for it at most until the probe's
// deadline (capped by the run's). A probe that overruns becomes an error observation;
// a probe that throws becomes an error observation; nothing here aborts the run.
PostureRun run_posture(const PostureOptions& options, std::span<const ProbeDescriptor> probes);

std::string isoprobe_version();       // "0.1.0"
std::string isoprobe_git_revision();  // short hash or "unknown"

}  // namespace isoprobe
