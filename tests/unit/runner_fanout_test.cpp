// for_each_parallel: the run's worker pool. Every index runs once, the pool really runs
// `workers` at once (no more), and a stop flag ends it without taking new indices.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "harness/runner/fanout.h"

using namespace isoharness::runner;
using namespace std::chrono_literals;

TEST_CASE("fan-out: every index runs exactly once", "[runner]") {
  for (int workers : {1, 3, 64}) {
    std::vector<std::atomic<int>> seen(100);
    for_each_parallel(seen.size(), workers, [&](std::size_t i) { ++seen[i]; });
    for (const auto& s : seen) CHECK(s.load() == 1);
  }
  bool called = false;
  for_each_parallel(0, 4, [&](std::size_t) { called = true; });
  CHECK_FALSE(called);
}

TEST_CASE("fan-out: `workers` jobs are in flight together, never more", "[runner]") {
  std::atomic<int> inside{0}, peak{0};
  for_each_parallel(24, 6, [&](std::size_t) {
    int now = ++inside;
    for (int seen = peak.load(); now > seen && !peak.compare_exchange_weak(seen, now);) {
    }
    // Waiting jobs overlap: each stays until six are in or a generous time has passed.
    auto until = std::chrono::steady_clock::now() + 5s;
    while (peak.load() < 6 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(5ms);
    --inside;
  });
  CHECK(peak.load() == 6);
}

TEST_CASE("fan-out: a stop flag ends the pool without starting new indices", "[runner]") {
  std::atomic<bool> stop{false};
  std::atomic<int> ran{0};
  for_each_parallel(
      1000, 1,
      [&](std::size_t i) {
        ++ran;
        if (i == 10) stop = true;
      },
      &stop);
  CHECK(ran.load() == 11);

  // Four workers: an index past 10 waits for the flag, so at most three are in flight.
  stop = false;
  ran = 0;
  for_each_parallel(
      1000, 4,
      [&](std::size_t i) {
        ++ran;
        if (i == 10) stop = true;
        auto until = std::chrono::steady_clock::now() + 5s;
        while (i > 10 && !stop.load() && std::chrono::steady_clock::now() < until)
          std::this_thread::sleep_for(1ms);
      },
      &stop);
  CHECK(ran.load() >= 11);
  CHECK(ran.load() <= 14);
}

TEST_CASE("fan-out: the deploy gate holds `places` at once and lets the highest priority in first",
          "[runner]") {
  DeployGate gate(1);
  gate.enter(0);  // the one place is taken
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread> waiters;
  for (int priority : {1, 5, 3, 5}) {
    waiters.emplace_back([&, priority] {
      GatePass pass(&gate, priority);
      std::lock_guard lock(mu);
      order.push_back(priority);
    });
    std::this_thread::sleep_for(50ms);  // arrival order: 1, 5, 3, 5
  }
  {
    std::lock_guard lock(mu);
    CHECK(order.empty());  // nobody passed while the place was held
  }
  gate.leave();
  for (auto& t : waiters) t.join();
  CHECK(order == std::vector<int>{5, 5, 3, 1});
}

TEST_CASE("fan-out: a later attempt of a job outranks a fresh job with as many attempts left", "[runner]") {
  CHECK(deploy_priority(2, 1) > deploy_priority(2, 2));  // two left before one left
  CHECK(deploy_priority(2, 2) > deploy_priority(1, 1));  // one left each: the one under way first
  CHECK(deploy_priority(3, 1) > deploy_priority(2, 1));
}

TEST_CASE("fan-out: background work has all finished when wait() returns", "[runner]") {
  std::atomic<int> done{0};
  Background bg;
  for (int i = 0; i < 8; ++i)
    bg.later([&] {
      std::this_thread::sleep_for(20ms);
      ++done;
    });
  bg.wait();
  CHECK(done.load() == 8);
}
