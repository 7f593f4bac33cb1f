// The lying agent of `isoharness selftest --agent lying`: the real probe runs in the
// sandbox, and its egress observation (what it sent, and the raw sockets it opened) is
// kept; every other observation is replaced by what a clean sandbox of the planned runtime
// reports (the plan's capabilities, no_new_privs, a seccomp filter or gVisor's own, the
// planned user, a read-only root, no device, socket, token or host namespace). The
// document stays on isoprobe's schema. It stands for a sandbox that controls its isoprobe:
// selftest must still catch every posture weakening, through the node's view.
//
// A selftest-only seam (runner::RunSettings::forge_posture); no production path sets it.
#pragma once

#include <nlohmann/json.hpp>

namespace isoharness::selftest {

// Rewrites `posture` (isoprobe's document, as the sandbox answered) in place into the lie,
// against the item's expect block.
void forge_clean_posture(nlohmann::json& posture, const nlohmann::json& expect);

}  // namespace isoharness::selftest
