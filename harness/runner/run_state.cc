#include "harness/runner/run_state.h"

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

void RunState::held(int delta) {
  const int now = held_ += delta;
  int most = most_held_.load();
  while (now > most && !most_held_.compare_exchange_weak(most, now)) {
  }
}

}  // namespace isoharness::runner
