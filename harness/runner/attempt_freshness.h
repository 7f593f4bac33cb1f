// Per-attempt freshness: what each attempt leaves in its sandbox (a marker file and a
// detached marker process) and what the next attempt checks for (the file, the process,
// and that its resolver answers this attempt's own instance name). The checks of one
// attempt run as one remote command, and the markers as another: every remote command is
// a round trip through the jumphost and a process start in the sandbox (expensive under
// gVisor's ptrace platform), and these used to take five of them plus an SFTP session.
//
// The commands are constant shell scripts; everything variable (the instance name, the
// marker text, a random frame boundary) goes in as positional arguments, never into the
// script text. What comes back is framed by the boundary and bounded; a sandbox can forge
// any of it, as it could forge the separate commands' output before.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/runner/framed_answer.h"
#include "harness/runner/sandbox_channel.h"
#include "harness/verify/verify.h"

namespace isoharness::runner {

// "fresh_sandbox", "fresh_process" and "fresh_dns" for this attempt, from one remote
// command. previous_instance: what the previous attempt's sandbox resolved; *seen gets
// what this one resolved. Throws InfraError when the command cannot run or its answer
// is unusable (as each separate command did).
std::vector<verify::CheckResult> check_freshness(SandboxChannel& session, const deploy::SandboxFacts& facts,
                                                 const std::string& previous_instance, int attempt,
                                                 std::string* seen);

// Leaves the marker file (with marker_text) and starts the marker process the next
// attempt must not find, then confirms the process runs; one remote command. Throws
// InfraError naming the step that failed.
void leave_attempt_markers(SandboxChannel& session, const std::string& marker_text);

}  // namespace isoharness::runner
