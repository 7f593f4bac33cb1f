#include "harness/runner/fanout.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace isoharness::runner {

void for_each_parallel(std::size_t n, int workers, const std::function<void(std::size_t)>& fn,
                       const std::atomic<bool>* stop) {
  std::atomic<std::size_t> next{0};
  const std::size_t threads = std::min<std::size_t>(n, static_cast<std::size_t>(std::max(workers, 1)));
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (std::size_t w = 0; w < threads; ++w) {
    pool.emplace_back([&] {
      for (;;) {
        if (stop && stop->load()) return;
        const std::size_t i = next++;
        if (i >= n) return;
        fn(i);
      }
    });
  }
  for (auto& t : pool) t.join();
}

int default_deploy_parallel() {
  const unsigned cpus = std::thread::hardware_concurrency();
  return std::clamp(2 * static_cast<int>(cpus == 0 ? 1 : cpus), 2, 64);
}

void DeployGate::enter(int priority) {
  std::unique_lock lock(mu_);
  const auto me = std::make_pair(-priority, next_ticket_++);
  waiting_.insert(me);
  cv_.wait(lock, [&] { return free_ > 0 && *waiting_.begin() == me; });
  waiting_.erase(waiting_.begin());
  --free_;
  cv_.notify_all();  // the next in line may fit too
}

void DeployGate::leave() {
  {
    std::lock_guard lock(mu_);
    ++free_;
  }
  cv_.notify_all();
}

int deploy_priority(int attempts, int attempt) {
  const int left = attempts - attempt + 1;
  return 2 * left + (attempt > 1 ? 1 : 0);
}

void Background::later(std::function<void()> fn) {
  std::lock_guard lock(mu_);
  threads_.emplace_back(std::move(fn));
}

void Background::wait() {
  for (;;) {
    std::vector<std::thread> batch;
    {
      std::lock_guard lock(mu_);
      batch.swap(threads_);
    }
    if (batch.empty()) return;
    for (auto& t : batch) t.join();
  }
}

}  // namespace isoharness::runner
