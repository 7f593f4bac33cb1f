// Fan-out: how `isoharness run` spreads its sandboxes over threads.
//
// A sandbox job is mostly waiting (for runsc to start, sshd to answer, the egress deadline
// of blocked targets, the jumphost), not computing, so the run keeps many in flight: up
// to `--parallel` jobs at once (default kDefaultParallel). Deploys are what fights for
// the CPU here (runc/runsc, ip, nft, sshd start-up), so at most `--deploy-parallel` run at
// once (default: two per CPU), in the order of the run's critical path: a job's attempts
// run one after another, so jobs with more attempts go first. A finished sandbox is torn
// down in the background while its job goes on. The transport is one jumphost connection
// whose pump thread moves every session's bytes (harness/transport/jump_pump.h).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

namespace isoharness::runner {

// Sandbox jobs at once unless --parallel says otherwise.
inline constexpr int kDefaultParallel = 16;

// Deploys at once when --deploy-parallel is not given: two per CPU of this machine.
int default_deploy_parallel();

// At most `places` deploys at once. Waiters go in priority order (higher first), in
// arrival order within one priority.
class DeployGate {
 public:
  explicit DeployGate(int places) : free_(places) {}
  void enter(int priority);
  void leave();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int free_;
  std::uint64_t next_ticket_ = 0;
  std::set<std::pair<int, std::uint64_t>> waiting_;  // (-priority, ticket)
};

// The critical path of a run is its longest chain of attempts (they run one after
// another), so: jobs with more attempts left first, and a job already under way before a
// fresh one with as many left.
int deploy_priority(int attempts, int attempt);

// Holds a place at the gate (none: no bound) for its lifetime.
class GatePass {
 public:
  GatePass(DeployGate* gate, int priority) : gate_(gate) {
    if (gate_) gate_->enter(priority);
  }
  ~GatePass() {
    if (gate_) gate_->leave();
  }
  GatePass(const GatePass&) = delete;
  GatePass& operator=(const GatePass&) = delete;

 private:
  DeployGate* gate_;
};

// Work that may finish after its caller moved on (tearing a sandbox down), each on its own
// thread; wait() (and the destructor) returns once all of it has finished.
class Background {
 public:
  Background() = default;
  ~Background() { wait(); }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  void later(std::function<void()> fn);
  void wait();

 private:
  std::mutex mu_;
  std::vector<std::thread> threads_;
};

// Calls fn(i) for every i in [0, n) from min(workers, n) threads, each taking the next
// index as it finishes one; no new index is taken once *stop is true. Returns when every
// thread has finished. fn must not throw.
void for_each_parallel(std::size_t n, int workers, const std::function<void(std::size_t)>& fn,
                       const std::atomic<bool>* stop = nullptr);

}  // namespace isoharness::runner
