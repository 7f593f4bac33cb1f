// Internal: one non-blocking libssh2 session over a connected socket, with every step held
// to a deadline. libssh2 calls return LIBSSH2_ERROR_EAGAIN instead of blocking; `call`
// repeats a call, waiting in poll() for the directions libssh2 says it is blocked on,
// until it completes or the deadline passes. Not thread-safe: one owner at a time.
#pragma once

#include <libssh2.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "harness/common/expected.h"
#include "harness/transport/ssh_route.h"
#include "harness/transport/transport.h"

namespace isoharness::transport {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

// libssh2_init once per process, thread-safely.
void ensure_libssh2_initialised();

// A TCP connection to host:port made within the deadline (TCP_NODELAY, non-blocking).
Expected<int> tcp_connect(const std::string& host, int port, Deadline deadline);

class SshSession {
 public:
  // Takes ownership of fd (closed on failure too). Handshake, host-key check against
  // `endpoint.host_key` plus `extra_pinned`, then public-key authentication. `what` names
  // the hop in messages ("jumphost 192.0.2.1:22").
  static Expected<std::unique_ptr<SshSession>> establish(
      int fd, const SshEndpoint& endpoint, const std::string& extra_pinned_text,
      const std::string& extra_pinned_source, const Credentials& credentials, const HostKeyPolicy& policy,
      Deadline deadline, const std::string& what, std::optional<AcceptedKey>* accepted);
  ~SshSession();
  SshSession(const SshSession&) = delete;
  SshSession& operator=(const SshSession&) = delete;

  LIBSSH2_SESSION* get() const { return session_; }
  int fd() const { return fd_; }
  const std::string& what() const { return what_; }

  // Waits until the socket is ready for what libssh2 is blocked on; false at the deadline.
  bool wait(Deadline deadline) const;

  // Repeats f() while it reports EAGAIN. Integer calls: returns f's result, or
  // LIBSSH2_ERROR_TIMEOUT at the deadline. Pointer calls: returns the pointer or nullptr
  // (then last_error() says why; a deadline shows as a timeout).
  template <typename F>
  auto call(Deadline deadline, F f) const -> decltype(f()) {
    for (;;) {
      auto r = f();
      if constexpr (std::is_pointer_v<decltype(r)>) {
        if (r != nullptr || libssh2_session_last_errno(session_) != LIBSSH2_ERROR_EAGAIN) return r;
        if (!wait(deadline)) {
          timed_out_ = true;
          return r;
        }
      } else {
        if (r != LIBSSH2_ERROR_EAGAIN) return r;
        if (!wait(deadline)) return LIBSSH2_ERROR_TIMEOUT;
      }
    }
  }

  // The last libssh2 error as text ("timed out" after a call that hit its deadline).
  std::string last_error() const;

 private:
  SshSession(LIBSSH2_SESSION* session, int fd, std::string what);

  LIBSSH2_SESSION* session_;
  int fd_;
  std::string what_;
  mutable bool timed_out_ = false;
};

// "timed out" for LIBSSH2_ERROR_TIMEOUT, else the session's last error message.
std::string describe_rc(const SshSession& session, int rc);

}  // namespace isoharness::transport
