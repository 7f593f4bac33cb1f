// Transport benchmark: N executions of `true` on one sandbox through the jumphost, with
// 1, 8 and 16 sessions in parallel, done (a) by isoharness::transport over one jumphost
// connection and (b) by OpenSSH `ssh -J` in a loop (one process per execution, P loops in
// parallel), in the same run on the same sshd pair (tests/system/transport_world.h).
// Prints wall times side by side and the ratio OpenSSH / libssh2.
//
//   transport_bench [N]        (root; N defaults to 48 and is rounded up to a multiple of 16)
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "harness/common/subprocess.h"
#include "harness/transport/transport.h"
#include "tests/system/transport_world.h"

using namespace isoharness;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Timing {
  double total = 0;      // from connecting to the jumphost to the last exec's end
  double exec_only = 0;  // from all sessions open to the last exec's end
  int failures = 0;
};

Timing run_libssh2(const test::TransportWorld& world, int n, int parallel) {
  Timing t;
  auto start = Clock::now();
  auto jump = transport::JumpConnection::connect(world.route.jump, world.credentials, {}, 20s);
  if (!jump) throw std::runtime_error(jump.error().message);
  std::vector<std::unique_ptr<transport::SandboxSession>> sessions(static_cast<std::size_t>(parallel));
  std::vector<std::thread> threads;
  std::vector<int> failures(static_cast<std::size_t>(parallel), 0);
  for (int p = 0; p < parallel; ++p) {
    threads.emplace_back([&, p] {
      auto s = (*jump)->open(world.route.sandbox, 30s);
      if (!s) {
        std::fprintf(stderr, "open: %s\n", s.error().message.c_str());
        failures[p] = n / parallel;
        return;
      }
      sessions[p] = std::move(*s);
    });
  }
  for (auto& th : threads) th.join();
  threads.clear();
  auto opened = Clock::now();
  for (int p = 0; p < parallel; ++p) {
    if (!sessions[p]) continue;
    threads.emplace_back([&, p] {
      for (int i = 0; i < n / parallel; ++i) {
        auto r = sessions[p]->exec({"true"}, 30s, 4096);
        if (!r || r->exit_code != 0) ++failures[p];
      }
    });
  }
  for (auto& th : threads) th.join();
  t.total = seconds_since(start);
  t.exec_only = seconds_since(opened);
  for (int f : failures) t.failures += f;
  return t;
}

Timing run_openssh(const test::TransportWorld& world, int n, int parallel) {
  Timing t;
  auto start = Clock::now();
  std::vector<std::thread> threads;
  std::vector<int> failures(static_cast<std::size_t>(parallel), 0);
  for (int p = 0; p < parallel; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 0; i < n / parallel; ++i) {
        auto r = run_command(world.openssh_argv({"true"}), RunOptions{.deadline = 60s});
        if (!r || !r->ok()) ++failures[p];
      }
    });
  }
  for (auto& th : threads) th.join();
  t.total = t.exec_only = seconds_since(start);
  for (int f : failures) t.failures += f;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (::geteuid() != 0) {
    std::fprintf(stderr, "transport_bench needs root (it creates network namespaces and runs sshd)\n");
    return 2;
  }
  int n = argc > 1 ? std::atoi(argv[1]) : 48;
  if (n < 16) n = 16;
  n = (n + 15) / 16 * 16;
  try {
    auto world = test::TransportWorld::create();
    unsigned cpus = std::thread::hardware_concurrency();
    double load[3] = {0, 0, 0};
    (void)getloadavg(load, 3);
    fmt::print("transport bench: {} x `true` on one sandbox through one jumphost; {} CPUs, load {:.1f}\n", n,
               cpus, load[0]);
    fmt::print("{:>9}  {:>16}  {:>16}  {:>14}  {:>14}  {:>8}\n", "parallel", "libssh2 total s",
               "libssh2 exec s", "ssh -J total s", "ms per exec", "ratio");
    for (int parallel : {1, 8, 16}) {
      Timing ours = run_libssh2(*world, n, parallel);
      Timing theirs = run_openssh(*world, n, parallel);
      fmt::print("{:>9}  {:>16.3f}  {:>16.3f}  {:>14.3f}  {:>6.1f} / {:<6.1f}  {:>7.1f}x{}\n", parallel,
                 ours.total, ours.exec_only, theirs.total, 1000 * ours.total / n, 1000 * theirs.total / n,
                 theirs.total / ours.total,
                 ours.failures || theirs.failures
                     ? fmt::format("  FAILURES libssh2 {} ssh {}", ours.failures, theirs.failures)
                     : "");
    }
    fmt::print("ratio = ssh -J total / libssh2 total (higher: the shared jump connection is faster)\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "transport_bench: %s\n", e.what());
    return 3;
  }
  return 0;
}
