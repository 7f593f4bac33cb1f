// Internal: the jumphost connection's pump.
//
// Why: we want many sandbox sessions, driven by several worker threads, over one jumphost
// connection — the way `ssh -J` nests an SSH session inside a direct-tcpip channel of the
// jumphost's session — and a libssh2 session is not thread-safe. libssh2 could run an
// inner session straight over a channel through its I/O callbacks (LIBSSH2_CALLBACK_SEND
// and _RECV), but those would touch the jumphost's session from every worker thread. A
// socketpair keeps each inner session an ordinary socket session on its own thread, and
// only the pump touches the jumphost's session.
//
// How: one thread, the pump, owns the jumphost session and is the only code that touches
// it. A worker that wants a sandbox asks the pump (queue + eventfd wake-up) for a bridge:
// the pump opens a `direct-tcpip` channel to sandbox:2222 and pairs it with one end of a
// socketpair; the worker gets the other end and runs its own libssh2 session (the inner
// SSH session, with its own keys and host-key check) over that socket. The pump then
// shuttles bytes both ways, non-blocking: socket end → channel (libssh2_channel_write),
// channel → socket end (libssh2_channel_read), with bounded buffers on each side, and
// half-closes each direction when the other side reaches EOF. Because a read on any
// channel drains the whole jumphost socket into libssh2's per-channel queues, every pass
// tries every bridge, and the pump sleeps in poll() only after a pass that moved nothing
// and left libssh2 holding nothing a bridge could take (the socket does not announce
// bytes libssh2 already read).
// Channel opens are serialised (libssh2 keeps one open in flight per session).
#pragma once

#include <sys/eventfd.h>

#include <atomic>
#include <deque>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "harness/transport/ssh_session.h"

namespace isoharness::transport {

class JumpPump {
 public:
  explicit JumpPump(std::unique_ptr<SshSession> session);
  ~JumpPump();  // stops the thread; open bridges are closed
  JumpPump(const JumpPump&) = delete;
  JumpPump& operator=(const JumpPump&) = delete;

  // Asks the pump to open a direct-tcpip channel to host:port. Returns the caller's end of
  // a socketpair bridged to the channel (the caller owns and closes it).
  Expected<int> open_channel(const std::string& host, int port, Deadline deadline);

  bool alive() const { return !failed_.load(); }
  std::string failure() const;

 private:
  struct OpenRequest;
  struct Bridge;
  // The libssh2 calls that can leave a packet half-sent, in the order a pass makes them.
  enum class Op { write, eof, read, close, open };
  struct Blocked {
    Bridge* bridge;  // null for Op::open
    Op op;
  };

  void run();
  // One pass over the pending open and every bridge; whether anything moved.
  bool pump_once();
  // Sleeps in poll() until a socket or a request wakes the pump; whether the jumphost's
  // socket was readable. A hung-up jumphost fails the pump.
  bool wait_for_work();
  bool start_pending_open();
  bool pump_bridge(Bridge& bridge, Op from = Op::write);
  // pump_bridge's phases, in order. Those that return bool return false when the pass must
  // stop there (a packet left half-sent, or the channel failed); all set progress when
  // they moved bytes or changed the bridge's state.
  void read_local_end(Bridge& b, bool& progress);
  bool send_to_channel(Bridge& b, Op from, bool& progress);
  bool read_from_channel(Bridge& b, bool& progress);
  void deliver_to_local_end(Bridge& b, bool& progress);
  bool channel_failed(Bridge& b, long rc, bool& progress);
  bool outbound_blocked() const;
  // Whether libssh2 holds channel data for a bridge with room for it (see run()).
  bool data_waiting() const;
  bool close_bridge(Bridge& bridge);
  bool retry_blocked();
  void fail(const std::string& why);
  void wake() const;

  std::unique_ptr<SshSession> session_;
  int wake_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  mutable std::mutex mutex_;  // guards queue_ and failure_
  std::deque<std::shared_ptr<OpenRequest>> queue_;
  std::string failure_;
  // Only the pump thread touches these.
  std::shared_ptr<OpenRequest> opening_;
  std::list<Bridge> bridges_;
  std::optional<Blocked> blocked_;
  bool spun_ = false;  // the last poll woke for jumphost data that no bridge could take
  std::thread thread_;
};

}  // namespace isoharness::transport
