// The pump thread (see jump_pump.h for the design). One more libssh2 rule shapes the
// loop: a session has a single outgoing packet buffer, and when a call leaves a packet
// half-sent (EAGAIN with the OUTBOUND direction set), that same call must be repeated
// before any other call may send. The pump remembers such a call as `blocked_` and
// retries only it, waiting for the socket to become writable, before doing anything else.
#include "harness/transport/jump_pump.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace isoharness::transport {
namespace {

constexpr std::size_t kBufferCap = std::size_t{256} * 1024;  // per direction, per bridge
constexpr std::size_t kChunk = std::size_t{32} * 1024;
constexpr auto kCloseGrace = std::chrono::seconds(2);

bool is_session_error(int rc) {
  switch (rc) {
    case LIBSSH2_ERROR_SOCKET_SEND:
    case LIBSSH2_ERROR_SOCKET_RECV:
    case LIBSSH2_ERROR_SOCKET_DISCONNECT:
    case LIBSSH2_ERROR_SOCKET_TIMEOUT:
    case LIBSSH2_ERROR_DECRYPT:
    case LIBSSH2_ERROR_ENCRYPT:
    case LIBSSH2_ERROR_INVALID_MAC:
    case LIBSSH2_ERROR_KEX_FAILURE:
    case LIBSSH2_ERROR_PROTO:
    case LIBSSH2_ERROR_BAD_USE:
      return true;
    default:
      return false;
  }
}

}  // namespace

struct JumpPump::OpenRequest {
  std::string host;
  int port = 0;
  Deadline deadline;
  int pump_fd = -1;  // our end of the socketpair; moves into the bridge
  std::promise<Status> done;
  bool answered = false;

  void answer(Status status) {
    if (answered) return;
    answered = true;
    done.set_value(std::move(status));
  }
  ~OpenRequest() {
    if (pump_fd >= 0) ::close(pump_fd);
  }
};

struct JumpPump::Bridge {
  LIBSSH2_CHANNEL* channel = nullptr;
  int fd = -1;
  std::string target;
  std::string to_channel, to_local;
  bool local_eof = false, eof_sent = false, channel_eof = false, local_shut = false;
  bool closing = false;
  Deadline close_deadline{};
};

JumpPump::JumpPump(std::unique_ptr<SshSession> session) : session_(std::move(session)) {
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ISOHARNESS_CHECK(wake_fd_ >= 0);
  thread_ = std::thread([this] { run(); });
}

JumpPump::~JumpPump() {
  stop_ = true;
  wake();
  thread_.join();
  ::close(wake_fd_);
}

void JumpPump::wake() const {
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

std::string JumpPump::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

Expected<int> JumpPump::open_channel(const std::string& host, int port, Deadline deadline) {
  if (failed_) return make_error(failure());
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) {
    return make_error(fmt::format("socketpair: {}", std::strerror(errno)), errno);
  }
  auto request = std::make_shared<OpenRequest>();
  request->host = host;
  request->port = port;
  request->deadline = deadline;
  request->pump_fd = sv[1];
  auto answer = request->done.get_future();
  {
    std::lock_guard lock(mutex_);
    if (failed_ || stop_) {
      ::close(sv[0]);
      return make_error(failed_ ? failure_ : "jumphost connection is closing");
    }
    queue_.push_back(std::move(request));
  }
  wake();
  // The pump answers by the deadline; the margin covers its scheduling.
  if (answer.wait_until(deadline + std::chrono::milliseconds(500)) != std::future_status::ready) {
    ::close(sv[0]);
    return make_error(fmt::format("opening a channel to {}:{} through the jumphost timed out", host, port));
  }
  Status status = answer.get();
  if (!status) {
    ::close(sv[0]);
    return status.error();
  }
  return sv[0];
}

void JumpPump::fail(const std::string& why) {
  std::deque<std::shared_ptr<OpenRequest>> pending;
  {
    std::lock_guard lock(mutex_);
    if (failure_.empty()) failure_ = "jumphost connection failed: " + why;
    failed_ = true;
    pending.swap(queue_);
  }
  for (auto& r : pending) r->answer(make_error(failure()));
  if (opening_) opening_->answer(make_error(failure()));
}

// Drives the channel open at the head of the queue. Returns whether anything moved.
bool JumpPump::start_pending_open() {
  if (!opening_) {
    std::lock_guard lock(mutex_);
    if (queue_.empty()) return false;
    opening_ = std::move(queue_.front());
    queue_.pop_front();
  }
  auto& req = *opening_;
  // A request past its deadline is answered at once, but libssh2's open must still be
  // completed (it is one state machine per session); its channel is then closed.
  if (!req.answered && Clock::now() >= req.deadline) {
    req.answer(make_error(
        fmt::format("opening a channel to {}:{} through the jumphost timed out", req.host, req.port)));
  }
  LIBSSH2_SESSION* s = session_->get();
  LIBSSH2_CHANNEL* ch = libssh2_channel_direct_tcpip_ex(s, req.host.c_str(), req.port, "127.0.0.1", 0);
  if (!ch) {
    int err = libssh2_session_last_errno(s);
    if (err == LIBSSH2_ERROR_EAGAIN) {
      if (libssh2_session_block_directions(s) & LIBSSH2_SESSION_BLOCK_OUTBOUND)
        blocked_ = Blocked{nullptr, Op::open};
      return false;
    }
    std::string why = session_->last_error();
    if (is_session_error(err)) {
      fail(why);
    } else {
      req.answer(
          make_error(fmt::format("the jumphost refused a channel to {}:{}: {}", req.host, req.port, why)));
    }
    opening_.reset();
    return true;
  }
  Bridge b;
  b.channel = ch;
  b.fd = req.pump_fd;
  req.pump_fd = -1;
  b.target = fmt::format("{}:{}", req.host, req.port);
  if (req.answered) {  // nobody waits for it any more
    b.closing = true;
    b.close_deadline = Clock::now() + kCloseGrace;
  }
  bridges_.push_back(std::move(b));
  req.answer(Ok{});
  opening_.reset();
  return true;
}

bool JumpPump::pump_bridge(Bridge& b, Op from) {
  if (b.closing) return false;
  bool progress = false;
  if (from == Op::write) read_local_end(b, progress);
  if (!send_to_channel(b, from, progress)) return progress;
  if (!read_from_channel(b, progress)) return progress;
  deliver_to_local_end(b, progress);
  // Done once the inner session has gone (all its bytes delivered), or both sides ended.
  if ((b.local_eof && b.eof_sent) || (b.channel_eof && b.local_shut && b.local_eof)) {
    b.closing = true;
    b.close_deadline = Clock::now() + kCloseGrace;
    progress = true;
  }
  return progress;
}

// Socket end → buffer.
void JumpPump::read_local_end(Bridge& b, bool& progress) {
  if (b.local_eof || b.to_channel.size() >= kBufferCap) return;
  char buf[kChunk];
  ssize_t n = ::recv(b.fd, buf, sizeof buf, MSG_DONTWAIT);
  if (n > 0) {
    b.to_channel.append(buf, static_cast<std::size_t>(n));
    progress = true;
  } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    b.local_eof = true;
    progress = true;
  }
}

// Buffer → channel, then the end of the socket's stream as the channel's EOF.
bool JumpPump::send_to_channel(Bridge& b, Op from, bool& progress) {
  while (from == Op::write && !b.to_channel.empty()) {
    ssize_t rc = libssh2_channel_write(b.channel, b.to_channel.data(), b.to_channel.size());
    if (rc > 0) {
      b.to_channel.erase(0, static_cast<std::size_t>(rc));
      progress = true;
      continue;
    }
    if (rc == LIBSSH2_ERROR_EAGAIN) {
      if (outbound_blocked()) blocked_ = Blocked{&b, Op::write};
      return false;
    }
    if (rc < 0) return channel_failed(b, rc, progress);
    break;
  }
  if (from != Op::read && b.local_eof && b.to_channel.empty() && !b.eof_sent) {
    int rc = libssh2_channel_send_eof(b.channel);
    if (rc == 0) {
      b.eof_sent = true;
      progress = true;
    } else if (rc == LIBSSH2_ERROR_EAGAIN) {
      if (outbound_blocked()) blocked_ = Blocked{&b, Op::eof};
      return false;
    } else {
      return channel_failed(b, rc, progress);
    }
  }
  return true;
}

// Channel → buffer, noting the channel's EOF.
bool JumpPump::read_from_channel(Bridge& b, bool& progress) {
  char buf[kChunk];
  while (!b.channel_eof && b.to_local.size() < kBufferCap) {
    ssize_t rc = libssh2_channel_read(b.channel, buf, sizeof buf);
    if (rc > 0) {
      b.to_local.append(buf, static_cast<std::size_t>(rc));
      progress = true;
      continue;
    }
    if (rc == 0 || rc == LIBSSH2_ERROR_EAGAIN) {
      if (libssh2_channel_eof(b.channel)) {
        b.channel_eof = true;
        progress = true;
      } else if (rc == LIBSSH2_ERROR_EAGAIN && outbound_blocked()) {
        blocked_ = Blocked{&b, Op::read};
        return false;
      }
      break;
    }
    return channel_failed(b, rc, progress);
  }
  return true;
}

// Buffer → socket end, then the channel's EOF as the end of the socket's stream.
void JumpPump::deliver_to_local_end(Bridge& b, bool& progress) {
  if (!b.to_local.empty()) {
    ssize_t n = ::send(b.fd, b.to_local.data(), b.to_local.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      b.to_local.erase(0, static_cast<std::size_t>(n));
      progress = true;
    } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      b.local_eof = true;  // the inner session is gone
      b.to_local.clear();
      progress = true;
    }
  }
  if (b.channel_eof && b.to_local.empty() && !b.local_shut) {
    ::shutdown(b.fd, SHUT_WR);
    b.local_shut = true;
    progress = true;
  }
}

// A channel call failed: the bridge closes, and the whole pump fails when the session did.
bool JumpPump::channel_failed(Bridge& b, long rc, bool& progress) {
  if (is_session_error(static_cast<int>(rc))) fail(fmt::format("{} ({})", session_->last_error(), b.target));
  b.closing = true;
  b.close_deadline = Clock::now() + kCloseGrace;
  progress = true;
  return false;
}

bool JumpPump::data_waiting() const {
  for (const auto& b : bridges_) {
    if (b.closing || b.channel_eof || b.to_local.size() >= kBufferCap) continue;
    unsigned long queued = 0;
    libssh2_channel_window_read_ex(b.channel, &queued, nullptr);
    if (queued > 0) return true;
  }
  return false;
}

bool JumpPump::outbound_blocked() const {
  return (libssh2_session_block_directions(session_->get()) & LIBSSH2_SESSION_BLOCK_OUTBOUND) != 0;
}

// Frees a closing bridge's channel. True when the bridge can be dropped.
bool JumpPump::close_bridge(Bridge& b) {
  int rc = libssh2_channel_free(b.channel);
  if (rc == LIBSSH2_ERROR_EAGAIN) {
    if (libssh2_session_block_directions(session_->get()) & LIBSSH2_SESSION_BLOCK_OUTBOUND) {
      blocked_ = Blocked{&b, Op::close};
      return false;
    }
    // Past the grace the channel is left to libssh2_session_free; the socket end closes.
    if (Clock::now() < b.close_deadline) return false;
  }
  ::close(b.fd);
  b.fd = -1;
  return true;
}

// Repeats the call that left a packet half-sent. True when it is no longer blocked.
bool JumpPump::retry_blocked() {
  Blocked blocked = *blocked_;
  blocked_.reset();
  if (blocked.op == Op::open) {
    start_pending_open();
  } else if (blocked.op == Op::close) {
    Bridge* b = blocked.bridge;
    if (close_bridge(*b)) bridges_.remove_if([&](const Bridge& x) { return &x == b; });
  } else {
    pump_bridge(*blocked.bridge, blocked.op);
  }
  return !blocked_;
}

bool JumpPump::pump_once() {
  bool progress = false;
  if (blocked_) progress = retry_blocked();
  if (blocked_) return progress;
  progress |= start_pending_open();
  for (auto it = bridges_.begin(); it != bridges_.end() && !blocked_ && !failed_;) {
    progress |= pump_bridge(*it);
    if (it->closing && !blocked_ && !failed_ && close_bridge(*it)) {
      it = bridges_.erase(it);
      progress = true;
      continue;
    }
    ++it;
  }
  return progress;
}

bool JumpPump::wait_for_work() {
  std::vector<pollfd> fds;
  fds.push_back({wake_fd_, POLLIN, 0});
  short ssh_events = POLLRDHUP;
  int dirs = libssh2_session_block_directions(session_->get());
  bool busy = opening_ || !bridges_.empty();
  if (busy || (dirs & LIBSSH2_SESSION_BLOCK_INBOUND)) ssh_events |= POLLIN;
  if (dirs & LIBSSH2_SESSION_BLOCK_OUTBOUND) ssh_events |= POLLOUT;
  if (spun_) ssh_events &= ~POLLIN;  // readable but nothing could take the data: back off
  fds.push_back({session_->fd(), ssh_events, 0});
  if (!blocked_) {
    for (const auto& b : bridges_) {
      short ev = 0;
      if (!b.closing && !b.local_eof && b.to_channel.size() < kBufferCap) ev |= POLLIN;
      if (!b.closing && !b.to_local.empty()) ev |= POLLOUT;
      fds.push_back({b.closing ? -1 : b.fd, ev, 0});  // a closing bridge's hangup would wake us forever
    }
  }
  int timeout = spun_ ? 10 : 200;
  if (opening_) timeout = 10;
  bool closing = false;
  for (const auto& b : bridges_) closing |= b.closing;
  if (closing) timeout = 20;
  if (::poll(fds.data(), fds.size(), timeout) <= 0) return false;
  const short re = fds[1].revents;
  if ((re & (POLLHUP | POLLERR | POLLRDHUP)) && !busy) {
    fail("the jumphost closed the connection");
    return false;
  }
  return (re & POLLIN) != 0;
}

void JumpPump::run() {
  bool last_ssh_readable = false;
  bool rescanned = false;
  while (!stop_ && !failed_) {
    std::uint64_t counter;
    [[maybe_unused]] auto n = ::read(wake_fd_, &counter, sizeof counter);

    const bool ssh_woke = last_ssh_readable;
    last_ssh_readable = false;
    const bool progress = pump_once();
    if (failed_ || stop_) break;
    // Readable, a pass moved nothing, and bytes still wait in the socket: no bridge could
    // take them (all buffers full). Without backing off, poll would return at once forever.
    int queued = 0;
    spun_ = !progress && ssh_woke && ::ioctl(session_->fd(), FIONREAD, &queued) == 0 && queued > 0;
    if (progress && !blocked_) {
      rescanned = false;
      continue;
    }
    // A channel read drains the jumphost's socket into libssh2's queue for every channel:
    // a bridge read earlier in the pass can have data waiting that the socket will not
    // announce again. One more pass takes it; data that pass cannot take waits for poll.
    if (!blocked_ && !rescanned && data_waiting()) {
      rescanned = true;
      continue;
    }
    rescanned = false;
    // Nothing moved: sleep until a socket or a request wakes us.
    last_ssh_readable = wait_for_work();
  }

  // Shutting down: fail whoever still waits, then drop every bridge (their socket ends
  // close, so the inner sessions see EOF). The session's destructor frees the channels.
  fail(stop_ ? "closed" : failure());
  for (auto& b : bridges_) {
    if (b.fd >= 0) ::close(b.fd);
  }
  bridges_.clear();
  opening_.reset();
  session_.reset();
}

}  // namespace isoharness::transport
