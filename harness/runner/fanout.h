// Fan-out: how `isoharness run` spreads its sandboxes over threads.
//
// A sandbox job is mostly waiting (for runsc to start, sshd to answer, the egress deadline
// of blocked targets, the jumphost), not computing, so the run keeps many in flight: up
// to `--parallel` jobs at once (default kDefaultParallel). What does cost CPU on the
// machine running the harness is bounded separately and in one place each: local deploys
// spawn runc/runsc (see DeployGate); the transport is one jumphost connection whose pump
// thread moves every session's bytes (harness/transport/jump_pump.h).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>

namespace isoharness::runner {

// Sandbox jobs at once unless --parallel says otherwise.
inline constexpr int kDefaultParallel = 16;

// Calls fn(i) for every i in [0, n) from min(workers, n) threads, each taking the next
// index as it finishes one; no new index is taken once *stop is true. Returns when every
// thread has finished. fn must not throw.
void for_each_parallel(std::size_t n, int workers, const std::function<void(std::size_t)>& fn,
                       const std::atomic<bool>* stop = nullptr);

}  // namespace isoharness::runner
