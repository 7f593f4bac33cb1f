// The loop keeps one small state machine per target:
//   resolve (UDP to the resolver, one retransmit) -> connect (non-blocking) ->
//   [http, tls: send the request or ClientHello -> read the first answer] -> done
// A name-scoped target (tls, or an http form with @SERVERNAME) counts as "connected" only
// when the far side answered: a name-checking proxy accepts the TCP connection and then
// resets it, closes it, or (Cilium's HTTP proxy) answers 403 ("denied").
// Each poll() round waits for any socket or for the nearest timer (retransmit or a
// deadline). When a target's deadline passes (its own, TargetSpec::deadline, or the egress
// deadline), it gets "timeout" if unfinished (or "dns_failed" when the resolver never
// answered) and its socket is closed. Every socket is closed on every path.
#include "probes/core/egress.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "probes/core/dns_packet.h"
#include "probes/core/socket_util.h"
#include "probes/core/text_util.h"
#include "probes/core/tls_hello.h"

namespace isoprobe {

std::string classify_connect_errno(int err) {
  switch (err) {
    case 0:
      return "connected";
    case ECONNREFUSED:
      return "refused";
    case ETIMEDOUT:
      return "timeout";
    default:
      return "unreachable";  // ENETUNREACH, EHOSTUNREACH, EACCES/EPERM (filtered), ...
  }
}

namespace {

enum class Phase { resolve, connect, http_send, http_read, done };

struct Work {
  const TargetSpec* spec = nullptr;
  EgressOutcome out;
  Phase phase = Phase::resolve;
  int fd = -1;
  std::uint16_t dns_id = 0;
  std::string query;
  int sends = 0;
  Clock::time_point next_send;
  std::string http_buf;
  std::uint32_t addr = 0;
  Clock::time_point started;
  // Writability reported while the socket was not connected yet (seen under gVisor's
  // host network stack): how often, and when to look at the socket again.
  int early_wakeups = 0;
  Clock::time_point recheck_at;
  std::string nonce;           // sent as the first bytes of the connection (empty: nothing is sent)
  Clock::time_point deadline;  // the egress deadline, or the target's own when sooner
};

// When a target started at `now` is given up: the target's own deadline, if it has one and
// it comes first, else the egress deadline.
Clock::time_point target_deadline(const TargetSpec& t, Clock::time_point now, Clock::time_point all) {
  return t.deadline ? std::min(all, now + *t.deadline) : all;
}

void close_fd(Work& w) {
  if (w.fd >= 0) ::close(w.fd);
  w.fd = -1;
}

void finish(Work& w, std::string result, int err, std::string detail) {
  close_fd(w);
  w.phase = Phase::done;
  w.out.result = std::move(result);
  w.out.err = err;
  if (!detail.empty()) w.out.detail = std::move(detail);
  w.out.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - w.started).count();
}

// The address to connect to: the IPv6 literal, or the IPv4 address (literal or resolved).
socklen_t connect_address(const Work& w, sockaddr_storage& ss) {
  ss = sockaddr_storage{};
  if (w.spec->ipv6) {
    auto* sa6 = reinterpret_cast<sockaddr_in6*>(&ss);
    sa6->sin6_family = AF_INET6;
    sa6->sin6_port = htons(w.spec->port);
    std::memcpy(&sa6->sin6_addr, w.spec->ipv6->data(), 16);
    return sizeof(sockaddr_in6);
  }
  sockaddr_in sa = ipv4_sockaddr(w.addr, w.spec->port);
  std::memcpy(&ss, &sa, sizeof sa);
  return sizeof sa;
}

void start_connect(Work& w) {
  w.out.address = w.spec->ipv6 ? format_ipv6(*w.spec->ipv6) : format_ipv4(w.addr);
  w.fd = ::socket(w.spec->ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (w.fd < 0) return finish(w, "unreachable", errno, "socket: " + errno_text(errno));
  sockaddr_storage sa;
  const socklen_t len = connect_address(w, sa);
  if (::connect(w.fd, reinterpret_cast<sockaddr*>(&sa), len) == 0) {
    w.phase = Phase::connect;  // completes on the next POLLOUT check
    return;
  }
  if (errno == EINPROGRESS) {
    w.phase = Phase::connect;
    return;
  }
  int e = errno;
  finish(w, classify_connect_errno(e), e, "connect: " + errno_text(e));
}

void send_query(Work& w) {
  ssize_t n = ::send(w.fd, w.query.data(), w.query.size(), MSG_NOSIGNAL);
  ++w.sends;
  // One retransmit, 1 s on, or halfway to a shorter own deadline (so it is sent at all).
  const auto half = w.spec->deadline ? *w.spec->deadline / 2 : std::chrono::milliseconds(1000);
  w.next_send = Clock::now() + std::min<Clock::duration>(std::chrono::milliseconds(1000), half);
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
    int e = errno;
    finish(w, "dns_failed", e, "send to resolver: " + errno_text(e));
  }
}

void start(Work& w, const std::optional<ResolverSpec>& resolver, const std::string& note, std::mt19937& rng) {
  w.started = Clock::now();
  const TargetSpec& t = *w.spec;
  if (t.ipv6) return start_connect(w);
  if (t.ipv4) {
    w.addr = *t.ipv4;
    if (t.proto == TargetProto::dns) {
      w.out.address = format_ipv4(w.addr);
      return finish(w, "connected", 0, "address literal: nothing to resolve");
    }
    return start_connect(w);
  }
  if (!resolver) return finish(w, "dns_failed", 0, "no resolver: " + note);
  w.dns_id = static_cast<std::uint16_t>(rng());
  DnsQuery q = build_dns_query(w.dns_id, t.host);
  if (q.bytes.empty()) return finish(w, "dns_failed", 0, q.error);
  w.query = std::move(q.bytes);
  w.fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (w.fd < 0) return finish(w, "dns_failed", errno, "socket: " + errno_text(errno));
  sockaddr_in sa = ipv4_sockaddr(resolver->address, resolver->port);
  if (::connect(w.fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    int e = errno;
    return finish(w, "dns_failed", e, "resolver " + format_ipv4(resolver->address) + ": " + errno_text(e));
  }
  send_query(w);
}

void on_dns_readable(Work& w) {
  char buf[4096];
  for (int i = 0; i < 16 && w.phase == Phase::resolve; ++i) {
    ssize_t n = ::recv(w.fd, buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      int e = errno;
      return finish(w, "dns_failed", e, "resolver: " + errno_text(e));
    }
    DnsResponse r =
        parse_dns_response(std::string_view(buf, static_cast<std::size_t>(n)), w.dns_id, w.spec->host);
    if (!r.ok) {
      w.out.detail = "ignored a bad DNS answer: " + r.error;
      continue;  // keep waiting for a good one until the deadline
    }
    if (r.rcode != 0 || r.addresses.empty()) {
      std::string why = r.rcode == 3   ? "NXDOMAIN"
                        : r.rcode != 0 ? "rcode " + std::to_string(r.rcode)
                                       : "no A record";
      if (r.truncated && r.addresses.empty()) why += " (truncated answer)";
      return finish(w, "dns_failed", 0, "resolver answered: " + why);
    }
    close_fd(w);
    w.addr = r.addresses.front();
    w.out.detail = "resolved to " + format_ipv4(w.addr);
    if (w.spec->proto == TargetProto::dns) {
      w.out.address = format_ipv4(w.addr);
      return finish(w, "connected", 0, "");
    }
    start_connect(w);
  }
}

// Bytes for one evidence line: printable ASCII kept, the rest as '.'.
std::string printable(std::string_view bytes) {
  std::string out;
  for (char c : bytes) out += (c >= 0x20 && c < 0x7f) ? c : '.';
  return out;
}

// Whether only an answer from the far side counts as connected (header comment).
bool name_scoped(const TargetSpec& t) {
  return t.proto == TargetProto::tls || !t.server_name.empty();
}

// What the target sends once connected: an HTTP request of its form, or a ClientHello.
// The request the probe sends once connected. An HTTP request carries the nonce in a header
// (the witness logs it); a TLS ClientHello carries none (bytes before it would not be TLS).
std::string request_for(const TargetSpec& t, const std::string& nonce) {
  if (t.proto == TargetProto::tls) {
    std::random_device rd;
    std::array<std::uint8_t, 32> random{};
    for (auto& b : random) b = static_cast<std::uint8_t>(rd());
    return build_client_hello(t.presented_name(), random);
  }
  const std::string head = "Host: " + t.presented_name() + "\r\nUser-Agent: isoprobe\r\n" +
                           (nonce.empty() ? "" : "X-Isoharness-Nonce: ihw-" + nonce + "\r\n");
  if (t.proto == TargetProto::http_google)
    return "GET /computeMetadata/v1/ HTTP/1.0\r\n" + head +
           "Metadata-Flavor: Google\r\nConnection: close\r\n\r\n";
  if (t.proto == TargetProto::http_imds_token)
    return "PUT /latest/api/token HTTP/1.0\r\n" + head +
           "X-aws-ec2-metadata-token-ttl-seconds: 60\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  return "GET / HTTP/1.0\r\n" + head + "Connection: close\r\n\r\n";
}

// The result when the exchange ends with an error after the TCP connection.
void finish_exchange_error(Work& w, const char* step, int err) {
  if (!name_scoped(*w.spec))
    return finish(w, "connected", 0, std::string("TCP connected; ") + step + " failed: " + errno_text(err));
  finish(w, err == ECONNRESET || err == EPIPE ? "reset" : "unreachable", err,
         std::string("TCP connected, then ") + step + ": " + errno_text(err));
}

// The result once the first answer (or its absence) is known.
void finish_answer(Work& w, std::string_view got) {
  const TargetSpec& t = *w.spec;
  if (t.proto == TargetProto::tls) {
    if (got.empty())
      return finish(w, "closed", 0, "TCP connected, then closed without an answer to the ClientHello");
    const bool server_hello = static_cast<std::uint8_t>(got[0]) == 0x16;
    return finish(w, "connected", 0,
                  std::string("answered the ClientHello (") +
                      (server_hello ? "a TLS handshake record" : "not TLS") + ", " +
                      std::to_string(got.size()) + " bytes): " + printable(got.substr(0, 60)));
  }
  std::string line = std::string(trim(got.substr(0, std::min<std::size_t>(got.find('\n'), 200))));
  if (line.empty()) {
    if (name_scoped(t))
      return finish(w, "closed", 0, "TCP connected, then closed without an HTTP status line");
    line = "(connection closed without an HTTP status line)";
  }
  const bool denied = name_scoped(t) && line.rfind("HTTP/", 0) == 0 && line.find(" 403") != std::string::npos;
  finish(w, denied ? "denied" : "connected", 0, "HTTP: " + line);
}

void on_connect_ready(Work& w) {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(w.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err == EINPROGRESS || err == EALREADY) return;
  if (err != 0) return finish(w, classify_connect_errno(err), err, "connect: " + errno_text(err));
  // SO_ERROR 0 alone does not prove a connection: a sandbox kernel that wakes the poller
  // early leaves it at 0 while the SYN is still unanswered. Only a peer address does.
  sockaddr_storage peer{};
  socklen_t plen = sizeof peer;
  if (::getpeername(w.fd, reinterpret_cast<sockaddr*>(&peer), &plen) != 0) {
    if (errno == ENOTCONN) {
      ++w.early_wakeups;
      w.recheck_at = Clock::now() + std::chrono::milliseconds(20);
      w.out.detail = "writable before connected " + std::to_string(w.early_wakeups) + " time(s)";
      return;
    }
    int e = errno;
    return finish(w, classify_connect_errno(e), e, "getpeername: " + errno_text(e));
  }
  if (w.spec->proto != TargetProto::tls && !is_http(w.spec->proto)) {
    if (!w.nonce.empty()) {  // best effort: the connection is the result; the bytes are for the witness
      const std::string tag = "ihw-" + w.nonce + "\n";
      (void)!::send(w.fd, tag.data(), tag.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    return finish(w, "connected", 0, w.out.detail);
  }
  w.phase = Phase::http_send;
  w.http_buf = request_for(*w.spec, w.nonce);
}

void on_http_send(Work& w) {
  ssize_t n = ::send(w.fd, w.http_buf.data(), w.http_buf.size(), MSG_NOSIGNAL);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
    return finish_exchange_error(w, "sending the request", errno);
  }
  w.http_buf.erase(0, static_cast<std::size_t>(n));
  if (w.http_buf.empty()) w.phase = Phase::http_read;
}

void on_http_read(Work& w) {
  char buf[512];
  ssize_t n = ::recv(w.fd, buf, sizeof buf, 0);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
    if (!w.http_buf.empty()) return finish_answer(w, w.http_buf);
    return finish_exchange_error(w, "reading the answer", errno);
  }
  if (n > 0) w.http_buf.append(buf, static_cast<std::size_t>(n));
  const bool tls = w.spec->proto == TargetProto::tls;
  if ((tls && !w.http_buf.empty()) || w.http_buf.find('\n') != std::string::npos || n == 0 ||
      w.http_buf.size() >= 512)
    finish_answer(w, w.http_buf);
}

// A target's socket is ready: the step of its phase.
void on_ready(Work& w) {
  switch (w.phase) {
    case Phase::resolve:
      on_dns_readable(w);
      break;
    case Phase::connect:
      on_connect_ready(w);
      break;
    case Phase::http_send:
      on_http_send(w);
      break;
    case Phase::http_read:
      on_http_read(w);
      break;
    case Phase::done:
      break;
  }
}

// The deadline passed: what an unfinished target's phase says about it.
void finish_at_deadline(Work& w) {
  switch (w.phase) {
    case Phase::done:
      return;
    case Phase::resolve:
      finish(w, "dns_failed", 0, "the resolver did not answer before the deadline");
      return;
    case Phase::connect:
      finish(w, "timeout", 0,
             "no answer to the connection attempt before the deadline" +
                 (w.early_wakeups ? " (" + w.out.detail + ")" : std::string()));
      return;
    default:
      if (name_scoped(*w.spec))
        finish(w, "timeout", 0, "TCP connected; no answer before the deadline");
      else
        finish(w, "connected", 0, "TCP connected; no HTTP status line before the deadline");
      return;
  }
}

// Every target's state, each started (its socket open, its first packet sent).
std::vector<Work> start_all(const std::vector<TargetSpec>& targets,
                            const std::optional<ResolverSpec>& resolver, const std::string& resolver_note,
                            Clock::time_point deadline, const std::string& nonce) {
  std::random_device seed;
  std::mt19937 rng(seed());
  std::vector<Work> work(targets.size());
  for (std::size_t i = 0; i < targets.size(); ++i) {
    Work& w = work[i];
    w.spec = &targets[i];
    w.out.name = targets[i].name;
    w.out.host = targets[i].host;
    w.out.port = targets[i].port;
    w.out.proto = std::string(proto_name(targets[i].proto));
    w.out.server_name = targets[i].server_name;
    w.nonce = nonce;
    w.deadline = target_deadline(targets[i], Clock::now(), deadline);
    start(w, resolver, resolver_note, rng);
  }
  return work;
}

}  // namespace

std::vector<EgressOutcome> run_egress(const std::vector<TargetSpec>& targets,
                                      const std::optional<ResolverSpec>& resolver,
                                      const std::string& resolver_note, Clock::time_point deadline,
                                      const std::string& nonce) {
  std::vector<Work> work = start_all(targets, resolver, resolver_note, deadline, nonce);
  std::vector<pollfd> fds;
  std::vector<std::size_t> owner;
  // Bounded: every round either makes progress or sleeps until a timer; the deadline
  // ends it. The count cap is a second guard against a busy loop.
  for (int round = 0; round < 100000; ++round) {
    auto now = Clock::now();
    if (now >= deadline) break;
    fds.clear();
    owner.clear();
    auto wake = deadline;
    for (std::size_t i = 0; i < work.size(); ++i) {
      Work& w = work[i];
      if (w.phase != Phase::done && now >= w.deadline) finish_at_deadline(w);
      if (w.phase == Phase::done) continue;
      wake = std::min(wake, w.deadline);
      if (w.phase == Phase::resolve) {
        if (now >= w.next_send && w.sends < 2) send_query(w);
        if (w.phase == Phase::done) continue;
        if (w.sends < 2) wake = std::min(wake, w.next_send);
      }
      if (w.phase == Phase::connect && now < w.recheck_at) {
        wake = std::min(wake, w.recheck_at);  // an early wake-up: look again later, not in a busy loop
        continue;
      }
      short events = (w.phase == Phase::connect || w.phase == Phase::http_send) ? POLLOUT : POLLIN;
      fds.push_back(pollfd{w.fd, events, 0});
      owner.push_back(i);
    }
    if (fds.empty()) break;
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count() + 1;
    int rc = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<long long>(wait, 0)));
    if (rc < 0 && errno != EINTR) break;
    if (rc <= 0) continue;
    for (std::size_t k = 0; k < fds.size(); ++k)
      if (fds[k].revents) on_ready(work[owner[k]]);
  }
  std::vector<EgressOutcome> out;
  for (Work& w : work) {
    finish_at_deadline(w);
    out.push_back(std::move(w.out));
  }
  return out;
}

}  // namespace isoprobe
