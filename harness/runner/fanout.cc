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

}  // namespace isoharness::runner
