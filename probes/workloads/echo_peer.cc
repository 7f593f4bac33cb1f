#include "workloads/echo_peer.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace isoprobe::workloads {

bool read_full(int fd, void* buf, std::size_t n) {
  auto* p = static_cast<char*>(buf);
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<std::size_t>(r);
  }
  return true;
}

bool write_full(int fd, const void* buf, std::size_t n) {
  const auto* p = static_cast<const char*>(buf);
  std::size_t sent = 0;
  while (sent < n) {
    ssize_t w = ::write(fd, p + sent, n - sent);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    sent += static_cast<std::size_t>(w);
  }
  return true;
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
