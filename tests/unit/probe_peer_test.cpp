// `isoprobe reach` against real sockets on 127.0.0.1 (nothing leaves the machine): a
// listener that reads the nonce line and answers with a banner, and a closed port; and the
// nonce line's parser on cut and hostile bytes.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <thread>

#include "probes/core/peer_serve.h"

using namespace isoprobe;

namespace {

// A listener on 127.0.0.1 at an ephemeral port; returns its fd and port.
int listen_local(std::uint16_t& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
  REQUIRE(::listen(fd, 4) == 0);
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  port = ntohs(sa.sin_port);
  return fd;
}

TargetSpec local_target(const std::string& name, std::uint16_t port) {
  std::string error;
  auto spec = parse_target_spec(name + "=127.0.0.1:" + std::to_string(port) + "/tcp", &error);
  REQUIRE(spec);
  return *spec;
}

}  // namespace

TEST_CASE("peer line: only a whole line with a valid nonce", "[probe]") {
  CHECK(parse_peer_line(peer_line("00112233aabbccdd")) == std::optional<std::string>("00112233aabbccdd"));
  CHECK_FALSE(parse_peer_line("isoharness-peer 00112233aabbccdd"));  // cut before the newline
  CHECK_FALSE(parse_peer_line("isoharness-peer XYZ\n"));
  CHECK_FALSE(parse_peer_line("SSH-2.0-OpenSSH\r\n"));
  CHECK_FALSE(parse_peer_line(""));
}

TEST_CASE("reach: the nonce line reaches a listener, a closed port is refused", "[probe]") {
  std::uint16_t open_port = 0, closed_port = 0;
  int listener = listen_local(open_port);
  int closed = listen_local(closed_port);
  ::close(closed);  // nothing listens there any more
  std::string received;
  std::thread server([&] {
    pollfd p{listener, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) return;
    int conn = ::accept(listener, nullptr, nullptr);
    if (conn < 0) return;
    (void)!::send(conn, "SSH-2.0-test\r\n", 14, MSG_NOSIGNAL);
    char buf[128];
    for (int i = 0; i < 20 && received.find('\n') == std::string::npos; ++i) {
      pollfd q{conn, POLLIN, 0};
      if (::poll(&q, 1, 100) <= 0) continue;
      ssize_t n = ::recv(conn, buf, sizeof buf, 0);
      if (n <= 0) break;
      received.append(buf, static_cast<std::size_t>(n));
    }
    ::close(conn);
  });
  auto out = run_reach({local_target("open", open_port), local_target("closed", closed_port)},
                       "00112233aabbccdd", 2000);
  server.join();
  ::close(listener);
  REQUIRE(out.size() == 2);
  CHECK(out[0].result == "connected");
  CHECK(out[0].banner.rfind("SSH-2.0-test", 0) == 0);
  CHECK(out[0].ended_unix_ms >= out[0].started_unix_ms);
  CHECK(parse_peer_line(received) == std::optional<std::string>("00112233aabbccdd"));
  CHECK(out[1].result == "refused");
}
