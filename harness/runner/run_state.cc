#include "harness/runner/run_state.h"

#include "harness/common/error.h"

namespace isoharness::runner {

void RunState::stop_run(const std::string& why) {
  std::lock_guard lock(mutex_);
  if (stop_reason_.empty()) stop_reason_ = why;
  stop_flag_ = true;
}

std::string RunState::stop_reason() const {
  std::lock_guard lock(mutex_);
  if (stop_reason_.empty() && interrupted()) return "the run was interrupted by a signal";
  return stop_reason_;
}

double RunState::enter_held() {
  const auto asked = std::chrono::steady_clock::now();
  std::unique_lock lock(held_mutex_);
  for (;;) {
    const int limit = held_limit_.load();
    if (limit <= 0 || held_.load() < limit) break;
    const std::string slots =
        " of the " + std::to_string(limit) + " live evals the platform allows (hawk.max_live_evals)";
    if (interrupted() || stopped())
      throw InfraError("the run stopped while this sandbox waited for one" + slots);
    if (std::chrono::steady_clock::now() - asked > held_max_wait_)
      throw InfraError("no room within " + std::to_string(held_max_wait_.count()) +
                       " s (hawk.start_timeout_s + hawk.quota_wait_s + 600): the run held all" + slots);
    room_.wait_for(lock, std::chrono::milliseconds(200));
  }
  const int now = ++held_;
  if (now > most_held_.load()) most_held_ = now;  // every change is under held_mutex_
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
}

void RunState::leave_held() {
  {
    std::lock_guard lock(held_mutex_);
    --held_;
  }
  room_.notify_one();
}

}  // namespace isoharness::runner
