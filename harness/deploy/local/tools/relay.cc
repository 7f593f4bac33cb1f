// A delay relay: the local world's far jumphost link (the profile's jumphost_link.rtt_ms)
// made in userspace, so that it behaves the same on every kernel (this one has no
// sch_netem, and a qdisc would need one).
//
// One thread, one poll loop. Each accepted connection is paired with a fresh connection to
// --to. Whatever is read on one side is queued with a due time (arrival + delay) and
// written to the other side once that time has come; the queue is first in, first out and
// each chunk's due time is never earlier than the one before, so order is kept. A
// direction holds at most --buffer-bytes: past that it stops reading, and TCP's own flow
// control slows the sender. The loop sleeps in ppoll until the next due time or the next
// event (no spinning), so an idle relay costs nothing. An end of stream is queued like
// data and passed on with shutdown(SHUT_WR) when due; an error or reset on either side
// closes both. With a delay D each way, a request and its answer take 2*D longer.
#include "harness/deploy/local/tools/relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <list>
#include <string>
#include <vector>

namespace isoharness::world_helper {
namespace {

using Clock = std::chrono::steady_clock;

struct RelayOptions {
  sockaddr_in listen{};
  sockaddr_in to{};
  std::chrono::microseconds delay{0};
  long max_seconds = 3600;
  std::size_t max_connections = 64;
  std::size_t buffer_bytes = 1 << 20;
};

struct Chunk {
  Clock::time_point due;
  std::string bytes;  // empty: the end of the stream
};

// One direction of a pair: read from `from`, held in `queue`, written to `to`.
struct Direction {
  std::deque<Chunk> queue;
  std::size_t queued = 0;  // bytes in queue and out
  std::string out;         // due bytes not yet written
  bool read_done = false;  // end of stream read
  bool eof_due = false;    // the end of stream is due: shut down once out is written
  bool shut = false;       // shutdown(to, SHUT_WR) done
};

// A client's pair: its upstream connection starts `delay` after the accept (the far
// link's SYN on its way), then connects, then carries bytes both ways.
enum class Stage { waiting, connecting, open };
struct Pair {
  int client = -1;
  int upstream = -1;
  Stage stage = Stage::waiting;
  Clock::time_point connect_due;
  bool dead = false;
  Direction up;    // client -> upstream
  Direction down;  // upstream -> client
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "isoharness-world-helper relay: %s\n", what.c_str());
  std::exit(2);
}

long number(const std::string& text, const char* what) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 0) die(std::string("bad ") + what + ": " + text);
  return v;
}

sockaddr_in endpoint(const std::string& spec) {
  auto colon = spec.rfind(':');
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  long port = colon == std::string::npos ? 0 : number(spec.substr(colon + 1), "port");
  if (port <= 0 || port > 65535 || inet_pton(AF_INET, spec.substr(0, colon).c_str(), &sa.sin_addr) != 1)
    die("bad endpoint " + spec + " (want IPv4:PORT)");
  sa.sin_port = htons(static_cast<uint16_t>(port));
  return sa;
}

RelayOptions relay_options(const std::vector<std::string>& args) {
  RelayOptions o;
  bool have_listen = false, have_to = false;
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    const std::string& k = args[i];
    const std::string& v = args[i + 1];
    if (k == "--listen") {
      o.listen = endpoint(v);
      have_listen = true;
    } else if (k == "--to") {
      o.to = endpoint(v);
      have_to = true;
    } else if (k == "--delay-us") {
      o.delay = std::chrono::microseconds(number(v, k.c_str()));
    } else if (k == "--max-seconds") {
      o.max_seconds = number(v, k.c_str());
    } else if (k == "--max-connections") {
      o.max_connections = static_cast<std::size_t>(number(v, k.c_str()));
    } else if (k == "--buffer-bytes") {
      o.buffer_bytes = static_cast<std::size_t>(number(v, k.c_str()));
    } else if (k != "--tag") {
      die("unknown option " + k);
    }
  }
  if (!have_listen || !have_to) die("needs --listen and --to");
  if (o.buffer_bytes < 4096 || o.max_connections == 0) die("--buffer-bytes >= 4096, --max-connections >= 1");
  return o;
}

int open_listener(const sockaddr_in& at) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int one = 1;
  if (fd >= 0) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&at), sizeof at) != 0 || ::listen(fd, 64) != 0)
    die(std::string("cannot listen: ") + std::strerror(errno));
  return fd;
}

void no_delay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Accepts one client; its upstream connection starts when due (start_upstream). False when
// nothing was pending.
bool accept_one(int listener, const RelayOptions& o, std::list<Pair>& pairs) {
  int client = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (client < 0) return false;
  no_delay(client);
  Pair& p = pairs.emplace_back();
  p.client = client;
  p.connect_due = Clock::now() + o.delay;
  return true;
}

void start_upstream(Pair& p, const RelayOptions& o) {
  p.upstream = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (p.upstream < 0 || (::connect(p.upstream, reinterpret_cast<const sockaddr*>(&o.to), sizeof o.to) != 0 &&
                         errno != EINPROGRESS)) {
    std::fprintf(stderr, "isoharness-world-helper relay: connect upstream: %s\n", std::strerror(errno));
    p.dead = true;
    return;
  }
  no_delay(p.upstream);
  p.stage = Stage::connecting;
}

// Reads what `fd` has into `d`'s queue, due `delay` from now.
void read_into(int fd, Direction& d, const RelayOptions& o, Pair& p) {
  char buf[65536];
  std::size_t room = o.buffer_bytes - d.queued;
  ssize_t n = ::read(fd, buf, std::min(room, sizeof buf));
  if (n < 0) {
    if (errno != EAGAIN && errno != EINTR) p.dead = true;
    return;
  }
  const auto due = Clock::now() + o.delay;
  if (n == 0) d.read_done = true;
  d.queue.push_back(Chunk{due, std::string(buf, static_cast<std::size_t>(n))});
  d.queued += static_cast<std::size_t>(n);
}

// Moves due chunks to the output; writes what the socket takes now; passes a due end on.
void flush(int fd, Direction& d, Pair& p) {
  const auto now = Clock::now();
  while (!d.queue.empty() && d.queue.front().due <= now && !d.eof_due) {
    if (d.queue.front().bytes.empty()) d.eof_due = true;
    d.out += d.queue.front().bytes;
    d.queue.pop_front();
  }
  if (!d.out.empty()) {
    ssize_t n = ::send(fd, d.out.data(), d.out.size(), MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      p.dead = true;
      return;
    }
    if (n > 0) {
      d.out.erase(0, static_cast<std::size_t>(n));
      d.queued -= static_cast<std::size_t>(n);
    }
  }
  if (d.eof_due && d.out.empty() && !d.shut) {
    ::shutdown(fd, SHUT_WR);
    d.shut = true;
  }
}

short wanted(const Direction& reading, const Direction& writing, const RelayOptions& o) {
  short ev = 0;
  if (!reading.read_done && reading.queued < o.buffer_bytes) ev |= POLLIN;
  if (!writing.out.empty()) ev |= POLLOUT;
  return ev;
}

// The next due time of any queued chunk or upstream connection, or `until` when none is
// sooner.
Clock::time_point next_due(const std::list<Pair>& pairs, Clock::time_point until) {
  for (const auto& p : pairs) {
    if (p.stage == Stage::waiting && p.connect_due < until) until = p.connect_due;
    for (const Direction* d : {&p.up, &p.down})
      if (!d->queue.empty() && !d->eof_due && d->queue.front().due < until) until = d->queue.front().due;
  }
  return until;
}

void finish_connect(Pair& p) {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(p.upstream, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
    std::fprintf(stderr, "isoharness-world-helper relay: upstream: %s\n", std::strerror(err));
    p.dead = true;
  }
  p.stage = Stage::open;
}

// Handles one pair's poll results (client at fds[0], upstream at fds[1]).
void serve(Pair& p, const pollfd* fds, const RelayOptions& o) {
  if (p.stage == Stage::waiting && (fds[0].revents & (POLLHUP | POLLERR))) p.dead = true;  // gone before
  if (p.stage == Stage::waiting && !p.dead && Clock::now() >= p.connect_due) start_upstream(p, o);
  if (p.stage == Stage::connecting && fds[1].revents != 0) finish_connect(p);
  if (p.stage != Stage::open || p.dead) return;
  if ((fds[0].revents | fds[1].revents) & (POLLERR | POLLNVAL)) p.dead = true;
  if (!p.dead && (fds[0].revents & (POLLIN | POLLHUP)) && !p.up.read_done) read_into(p.client, p.up, o, p);
  if (!p.dead && (fds[1].revents & (POLLIN | POLLHUP)) && !p.down.read_done)
    read_into(p.upstream, p.down, o, p);
  if (!p.dead) flush(p.upstream, p.up, p);
  if (!p.dead) flush(p.client, p.down, p);
}

bool finished(const Pair& p) {
  return p.dead || (p.up.shut && p.down.shut);
}

void close_pair(Pair& p) {
  ::close(p.client);
  if (p.upstream >= 0) ::close(p.upstream);
}

timespec until_then(Clock::time_point then) {
  auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(then - Clock::now());
  if (left.count() < 0) left = std::chrono::nanoseconds(0);
  return timespec{static_cast<time_t>(left.count() / 1000000000),
                  static_cast<long>(left.count() % 1000000000)};
}

void poll_round(int listener, const RelayOptions& o, std::list<Pair>& pairs, Clock::time_point end) {
  std::vector<pollfd> fds;
  fds.reserve(1 + 2 * pairs.size());
  fds.push_back({listener, static_cast<short>(pairs.size() < o.max_connections ? POLLIN : 0), 0});
  for (const auto& p : pairs) {
    // A side read to its end and shut for writing has nothing more to say: left out of the
    // poll, or its POLLHUP would wake the loop until the other direction is due.
    const bool client_over = p.up.read_done && p.down.shut, upstream_over = p.down.read_done && p.up.shut;
    const bool open = p.stage == Stage::open;
    fds.push_back({client_over ? -1 : p.client, open ? wanted(p.up, p.down, o) : short{0}, 0});
    fds.push_back({upstream_over ? -1 : p.upstream, open ? wanted(p.down, p.up, o) : short{POLLOUT}, 0});
  }
  const timespec wait = until_then(next_due(pairs, std::min(end, Clock::now() + std::chrono::seconds(1))));
  if (::ppoll(fds.data(), fds.size(), &wait, nullptr) < 0 && errno != EINTR) die("poll failed");
  std::size_t i = 1;
  for (auto& p : pairs) {
    serve(p, &fds[i], o);
    i += 2;
  }
  for (auto it = pairs.begin(); it != pairs.end();) {
    if (!finished(*it)) {
      ++it;
      continue;
    }
    close_pair(*it);
    it = pairs.erase(it);
  }
  if (fds[0].revents & POLLIN)
    while (pairs.size() < o.max_connections && accept_one(listener, o, pairs)) {
    }
}

}  // namespace

int cmd_relay(const std::vector<std::string>& args) {
  const RelayOptions o = relay_options(args);
  const int listener = open_listener(o.listen);
  std::list<Pair> pairs;
  const auto end = Clock::now() + std::chrono::seconds(o.max_seconds);
  while (Clock::now() < end) poll_round(listener, o, pairs, end);
  for (auto& p : pairs) close_pair(p);
  ::close(listener);
  return 0;
}

}  // namespace isoharness::world_helper
