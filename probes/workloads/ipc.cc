// Inter-process communication family, between two threads of isoprobe: a pipe
// ping-pong, a futex wake-up round trip, and a unix-socket round trip. Each iteration is
// one complete round trip: a message (or a wake-up) there and back.
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

#include "workloads/echo_peer.h"
#include "workloads/registry.h"

namespace isoprobe::workloads {

namespace {

void run_pipe_pingpong(benchmark::State& state, const Env&) {
  int there[2];
  int back[2];
  if (::pipe2(there, O_CLOEXEC) != 0) return fail_with_errno(state, "pipe");
  if (::pipe2(back, O_CLOEXEC) != 0) {
    ::close(there[0]);
    ::close(there[1]);
    return fail_with_errno(state, "pipe");
  }
  UniqueFd from_peer(back[0]);
  EchoPeer peer(there[0], back[1]);
  UniqueFd to_peer(there[1]);  // destroyed first: the peer sees end of input, then joins
  time_round_trips(state, to_peer.get(), from_peer.get(), 'p', "pipe round trip");
}

// Futex round trip: `turn` says whose move it is. Each side sets it for the other, wakes
// it, and sleeps on the futex until the value changes back; FUTEX_WAIT returns at once
// when the value already moved, so no wake-up can be lost. Every wait has a timeout.
enum : std::uint32_t { kMainTurn = 0, kWorkerTurn = 1, kStop = 2 };
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));

long futex_op(std::atomic<std::uint32_t>* word, int op, std::uint32_t value) {
  struct timespec timeout {
    1, 0
  };
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, value,
                   op == FUTEX_WAIT_PRIVATE ? &timeout : nullptr, nullptr, 0);
}

class FutexWorker {
 public:
  FutexWorker() : thread_([this] { loop(); }) {}
  ~FutexWorker() {
    turn_.store(kStop, std::memory_order_release);
    futex_op(&turn_, FUTEX_WAKE_PRIVATE, 1);
    thread_.join();
  }
  FutexWorker(const FutexWorker&) = delete;
  FutexWorker& operator=(const FutexWorker&) = delete;

  // One round trip; false when the worker did not answer within 10 s.
  bool round_trip() {
    turn_.store(kWorkerTurn, std::memory_order_release);
    futex_op(&turn_, FUTEX_WAKE_PRIVATE, 1);
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (turn_.load(std::memory_order_acquire) == kWorkerTurn) {
      futex_op(&turn_, FUTEX_WAIT_PRIVATE, kWorkerTurn);
      if (std::chrono::steady_clock::now() > give_up) return false;
    }
    return true;
  }

 private:
  void loop() {
    for (;;) {
      std::uint32_t now = turn_.load(std::memory_order_acquire);
      if (now == kStop) return;
      if (now == kWorkerTurn) {
        turn_.store(kMainTurn, std::memory_order_release);
        futex_op(&turn_, FUTEX_WAKE_PRIVATE, 1);
        continue;
      }
      futex_op(&turn_, FUTEX_WAIT_PRIVATE, kMainTurn);
    }
  }

  std::atomic<std::uint32_t> turn_{kMainTurn};
  std::thread thread_;
};

void run_futex_wake(benchmark::State& state, const Env&) {
  FutexWorker worker;
  for (auto _ : state) {
    if (!worker.round_trip()) return fail_with(state, "the futex worker did not wake within 10 s");
  }
}

void run_unix_rtt(benchmark::State& state, const Env& env) {
  const std::string path = env.scratch + "/unix_rtt.sock";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return fail_with(state, "scratch path too long for a unix socket (" + std::to_string(path.size()) +
                                " bytes, limit " + std::to_string(sizeof addr.sun_path - 1) + "): " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (listener.get() < 0) return fail_with_errno(state, "socket(AF_UNIX)");
  ::unlink(path.c_str());
  if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener.get(), 1) != 0) {
    return fail_with_errno(state, "bind/listen " + path);
  }
  int client_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (client_fd < 0) return fail_with_errno(state, "socket(AF_UNIX)");
  UniqueFd client_guard(client_fd);
  if (::connect(client_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return fail_with_errno(state, "connect " + path);
  }
  int server_fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
  ::unlink(path.c_str());
  if (server_fd < 0) return fail_with_errno(state, "accept");
  EchoPeer peer(server_fd, server_fd);
  UniqueFd client(client_guard.release());  // destroyed first: the peer sees end of input
  time_round_trips(state, client.get(), client.get(), 'u', "unix socket round trip");
}

}  // namespace

const Workload kPipePingpong{
    .name = "pipe_pingpong",
    .family = "ipc",
    .description = "64 bytes to a thread over one pipe and back over another (one round trip)",
    .run = run_pipe_pingpong,
};

const Workload kFutexWake{
    .name = "futex_wake",
    .family = "ipc",
    .description = "futex wake of a sleeping thread, which wakes this one back (two wake-ups)",
    .run = run_futex_wake,
};

const Workload kUnixRtt{
    .name = "unix_rtt",
    .family = "ipc",
    .description = "64 bytes over a unix stream socket in the scratch directory to an echo thread and back",
    .run = run_unix_rtt,
};

}  // namespace isoprobe::workloads
