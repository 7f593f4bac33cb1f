#include "workloads/echo_peer.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "workloads/workload.h"

namespace isoprobe::workloads {

namespace {

std::atomic<long> g_not_ready{0};

// A blocking descriptor that reports EAGAIN (runsc's host network stack does this on
// loopback TCP now and then): wait until it is ready, at most 5 s, then try again.
bool wait_ready(int fd, short events) {
  g_not_ready.fetch_add(1, std::memory_order_relaxed);
  pollfd p{fd, events, 0};
  int r;
  do {
    r = ::poll(&p, 1, 5000);
  } while (r < 0 && errno == EINTR);
  if (r == 0) errno = ETIMEDOUT;
  return r > 0;
}

constexpr int kMaxNotReady = 100000;  // per call: a descriptor that never gets ready fails

}  // namespace

long not_ready_count() {
  return g_not_ready.load(std::memory_order_relaxed);
}

bool read_full(int fd, void* buf, std::size_t n) {
  auto* p = static_cast<char*>(buf);
  std::size_t got = 0;
  int not_ready = 0;
  while (got < n) {
    ssize_t r = ::read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && ++not_ready < kMaxNotReady) {
      if (!wait_ready(fd, POLLIN)) return false;
      continue;
    }
    if (r <= 0) return false;
    got += static_cast<std::size_t>(r);
  }
  return true;
}

bool write_full(int fd, const void* buf, std::size_t n) {
  const auto* p = static_cast<const char*>(buf);
  std::size_t sent = 0;
  int not_ready = 0;
  while (sent < n) {
    ssize_t w = ::write(fd, p + sent, n - sent);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && ++not_ready < kMaxNotReady) {
      if (!wait_ready(fd, POLLOUT)) return false;
      continue;
    }
    if (w <= 0) return false;
    sent += static_cast<std::size_t>(w);
  }
  return true;
}

void time_round_trips(benchmark::State& state, int out_fd, int in_fd, char fill, const char* what) {
  char msg[kRoundTripBytes];
  std::memset(msg, fill, sizeof msg);
  const long not_ready_before = not_ready_count();
  for (auto _ : state) {
    if (!write_full(out_fd, msg, sizeof msg) || !read_full(in_fd, msg, sizeof msg)) {
      return fail_with_errno(state, what);
    }
  }
  state.counters["not_ready"] = static_cast<double>(not_ready_count() - not_ready_before);
}

UniqueFd::~UniqueFd() {
  if (fd_ < 0) return;
  ::shutdown(fd_, SHUT_WR);  // fails harmlessly (ENOTSOCK) on a pipe
  ::close(fd_);
}

EchoPeer::EchoPeer(int in_fd, int out_fd) : in_fd_(in_fd), out_fd_(out_fd) {
  thread_ = std::thread([this] {
    char buf[kRoundTripBytes];
    while (read_full(in_fd_, buf, sizeof buf) && write_full(out_fd_, buf, sizeof buf)) {
    }
    ::close(in_fd_);
    if (out_fd_ != in_fd_) ::close(out_fd_);
  });
}

EchoPeer::~EchoPeer() {
  thread_.join();
}

}  // namespace isoprobe::workloads
