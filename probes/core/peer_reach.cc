// `isoprobe reach` (peer_serve.h): every target at once over non-blocking sockets in one
// poll() loop under one deadline. A connect counts only when SO_ERROR is 0 and getpeername
// names the peer (egress.cc says why). On a connected socket the nonce line goes out and
// the first bytes the peer sends (an sshd's version line) are kept, until the deadline.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "probes/core/egress.h"
#include "probes/core/peer_serve.h"
#include "probes/core/text_util.h"

namespace isoprobe {
namespace {

constexpr std::size_t kMaxBanner = 120;

enum class Step { connecting, reading, done };

struct Try {
  ReachOutcome out;
  int fd = -1;
  Step step = Step::connecting;
};

void finish(Try& t, const std::string& result, int err) {
  if (t.out.result.empty()) t.out.result = result;
  t.out.err = err;
  t.out.ended_unix_ms = unix_ms_now();
  if (t.fd >= 0) ::close(t.fd);
  t.fd = -1;
  t.step = Step::done;
}

void start(Try& t, const TargetSpec& spec) {
  t.out.name = spec.name;
  t.out.port = spec.port;
  t.out.started_unix_ms = unix_ms_now();
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (spec.ipv6) {
    auto* sa = reinterpret_cast<sockaddr_in6*>(&ss);
    sa->sin6_family = AF_INET6;
    sa->sin6_port = htons(spec.port);
    std::memcpy(&sa->sin6_addr, spec.ipv6->data(), 16);
    len = sizeof *sa;
    t.out.address = format_ipv6(*spec.ipv6);
  } else {
    auto* sa = reinterpret_cast<sockaddr_in*>(&ss);
    sa->sin_family = AF_INET;
    sa->sin_port = htons(spec.port);
    sa->sin_addr.s_addr = htonl(*spec.ipv4);
    len = sizeof *sa;
    t.out.address = format_ipv4(*spec.ipv4);
  }
  t.fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (t.fd < 0) return finish(t, "no_socket", errno);
  if (::connect(t.fd, reinterpret_cast<sockaddr*>(&ss), len) == 0 || errno == EINPROGRESS) return;
  const int e = errno;
  finish(t, classify_connect_errno(e), e);
}

void on_writable(Try& t, const std::string& line) {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(t.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err == EINPROGRESS || err == EALREADY) return;
  if (err != 0) return finish(t, classify_connect_errno(err), err);
  sockaddr_storage peer{};
  socklen_t plen = sizeof peer;
  if (::getpeername(t.fd, reinterpret_cast<sockaddr*>(&peer), &plen) != 0) {
    if (errno == ENOTCONN) return;  // woken early; the deadline decides
    const int e = errno;
    return finish(t, classify_connect_errno(e), e);
  }
  t.out.result = "connected";
  (void)!::send(t.fd, line.data(), line.size(), MSG_NOSIGNAL);  // a few bytes into a fresh buffer
  t.step = Step::reading;
}

void on_readable(Try& t) {
  char buf[kMaxBanner];
  ssize_t n = ::recv(t.fd, buf, kMaxBanner - t.out.banner.size(), 0);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  bool line_end = false;
  for (ssize_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(buf[i]);
    line_end = line_end || c == '\n';
    t.out.banner += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '.';
  }
  if (n <= 0 || line_end || t.out.banner.size() >= kMaxBanner) finish(t, "connected", 0);
}

}  // namespace

std::vector<ReachOutcome> run_reach(const std::vector<TargetSpec>& targets, const std::string& nonce,
                                    long deadline_ms) {
  const std::string line = peer_line(nonce);
  std::vector<Try> tries(targets.size());
  for (std::size_t i = 0; i < targets.size(); ++i) start(tries[i], targets[i]);
  const auto until = Clock::now() + std::chrono::milliseconds(deadline_ms);
  while (Clock::now() < until) {
    std::vector<pollfd> fds;
    std::vector<Try*> who;
    for (auto& t : tries) {
      if (t.step == Step::done) continue;
      fds.push_back({t.fd, static_cast<short>(t.step == Step::connecting ? POLLOUT : POLLIN), 0});
      who.push_back(&t);
    }
    if (fds.empty()) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(std::max<long long>(left, 0), 50)));
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      if (who[i]->step == Step::connecting)
        on_writable(*who[i], line);
      else
        on_readable(*who[i]);
    }
  }
  for (auto& t : tries)
    if (t.step != Step::done) finish(t, "timeout", 0);  // connected ones keep "connected"
  std::vector<ReachOutcome> out;
  out.reserve(tries.size());
  for (auto& t : tries) out.push_back(std::move(t.out));
  return out;
}

}  // namespace isoprobe
