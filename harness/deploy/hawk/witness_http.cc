#include "harness/deploy/hawk/witness_http.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace isoharness::deploy::hawk {
namespace {

using HttpClock = std::chrono::steady_clock;

constexpr std::size_t kMaxHeaderBytes = std::size_t{16} * 1024;

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

int ms_left(HttpClock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - HttpClock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

// Waits for `events` on fd until the deadline; false on timeout or error.
bool wait_for(int fd, short events, HttpClock::time_point deadline) {
  pollfd p{fd, events, 0};
  for (;;) {
    const int left = ms_left(deadline);
    if (left == 0) return false;
    const int r = ::poll(&p, 1, left);
    if (r > 0) return true;
    if (r == 0 || errno != EINTR) return false;
  }
}

Expected<Ok> connect_by(int fd, const std::string& ipv4, int port, HttpClock::time_point deadline) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, ipv4.c_str(), &to.sin_addr) != 1)
    return make_error("'" + ipv4 + "' is not an IPv4 address");
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS)
    return make_error(std::string("connect: ") + std::strerror(errno), errno);
  if (!wait_for(fd, POLLOUT, deadline)) return make_error("connect timed out");
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) return make_error(std::string("connect: ") + std::strerror(err), err);
  return Ok{};
}

Expected<Ok> send_all(int fd, const std::string& data, HttpClock::time_point deadline) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    if (!wait_for(fd, POLLOUT, deadline)) return make_error("sending the request timed out");
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR)
      return make_error(std::string("send: ") + std::strerror(errno));
    if (n > 0) sent += static_cast<std::size_t>(n);
  }
  return Ok{};
}

// Reads until the peer closes or `limit` bytes; `cut` says the limit stopped it.
Expected<std::string> read_until_close(int fd, std::size_t limit, HttpClock::time_point deadline, bool& cut) {
  std::string raw;
  char buf[64 * 1024];
  cut = false;
  for (;;) {
    if (!wait_for(fd, POLLIN, deadline))
      return make_error("reading the answer timed out after " + std::to_string(raw.size()) + " bytes");
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) return raw;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return make_error(std::string("recv: ") + std::strerror(errno));
    }
    const std::size_t take = std::min(static_cast<std::size_t>(n), limit - raw.size());
    raw.append(buf, take);
    if (raw.size() >= limit) {
      cut = true;
      return raw;
    }
  }
}

}  // namespace

Expected<HttpBody> parse_http_answer(std::string_view raw, std::size_t max_body, bool cut) {
  const auto line_end = raw.find("\r\n");
  const std::string_view status = raw.substr(0, std::min(line_end, std::size_t{80}));
  const bool http =
      status.size() >= 12 && (status.substr(0, 9) == "HTTP/1.0 " || status.substr(0, 9) == "HTTP/1.1 ");
  if (line_end == std::string_view::npos || !http) return make_error("the answer is not HTTP/1.x");
  if (status.substr(9, 3) != "200") {
    std::string shown;
    for (char c : status.substr(9)) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
    return make_error("the server answered " + shown);
  }
  const auto head_end = raw.find("\r\n\r\n");
  if (head_end == std::string_view::npos || head_end > kMaxHeaderBytes)
    return make_error("the answer's headers do not end within " + std::to_string(kMaxHeaderBytes) + " bytes");
  std::string_view body = raw.substr(head_end + 4);
  HttpBody out;
  out.truncated = cut || body.size() > max_body;
  out.body = std::string(body.substr(0, max_body));
  return out;
}

std::string http_get_request(const std::string& host, int port, const std::string& path) {
  return "GET " + path + " HTTP/1.0\r\nHost: " + host + ":" + std::to_string(port) +
         "\r\nUser-Agent: isoharness-witness-reader\r\nConnection: close\r\n\r\n";
}

Expected<HttpBody> http_get_bounded(const std::string& ipv4, int port, const std::string& path,
                                    std::size_t max_body, std::chrono::milliseconds timeout) {
  const auto deadline = HttpClock::now() + timeout;
  Fd s{::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)};
  if (s.fd < 0) return make_error(std::string("socket: ") + std::strerror(errno));
  if (auto c = connect_by(s.fd, ipv4, port, deadline); !c) return c.error();
  if (auto w = send_all(s.fd, http_get_request(ipv4, port, path), deadline); !w) return w.error();
  bool cut = false;
  // One byte past the body bound tells a log that fits from one that does not.
  auto raw = read_until_close(s.fd, max_body + kMaxHeaderBytes + 1, deadline, cut);
  if (!raw) return raw.error();
  return parse_http_answer(*raw, max_body, cut);
}

}  // namespace isoharness::deploy::hawk
