// The egress engine against real sockets: a TCP listener, an HTTP server, a closed
// port, a full accept queue (timeout) and a small DNS server, all on 127.0.0.1 inside a
// network namespace this test creates (so nothing can leave the machine). Without the
// privilege to create one it stays on the host's loopback and skips the unreachable case
// (which would need a route to nowhere).
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "probes/core/datagram_egress.h"
#include "probes/core/dns_packet.h"
#include "probes/core/egress.h"
#include "probes/core/text_util.h"

using namespace isoprobe;

namespace {

bool g_own_netns = false;

void enter_own_netns() {
  static bool done = false;
  if (done) return;
  done = true;
  if (::unshare(CLONE_NEWNET) != 0) {
    WARN("cannot create a network namespace (" << std::strerror(errno) << "): using the host's loopback");
    return;
  }
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  REQUIRE(::ioctl(s, SIOCGIFFLAGS, &ifr) == 0);
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
  REQUIRE(::ioctl(s, SIOCSIFFLAGS, &ifr) == 0);
  ::close(s);
  g_own_netns = true;
}

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::uint16_t bound_port(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  return ntohs(sa.sin_port);
}

int loopback_socket(int type, int backlog) {
  int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
  if (type == SOCK_STREAM) REQUIRE(::listen(fd, backlog) == 0);
  return fd;
}

// Serves until stop; every loop waits at most 50 ms, so it ends promptly.
class Servers {
 public:
  Servers()
      : http_(loopback_socket(SOCK_STREAM, 8)),
        dns_(loopback_socket(SOCK_DGRAM, 0)),
        echo_(loopback_socket(SOCK_DGRAM, 0)) {
    thread_ = std::thread([this] { serve(); });
  }
  ~Servers() {
    stop_ = true;
    thread_.join();
  }
  std::uint16_t http_port() const { return bound_port(http_.fd); }
  std::uint16_t dns_port() const { return bound_port(dns_.fd); }
  std::uint16_t echo_port() const { return bound_port(echo_.fd); }
  std::string last_dns_name() {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_dns_name_;
  }
  std::atomic<int> dns_queries{0};

 private:
  void serve() {
    for (int i = 0; i < 400 && !stop_; ++i) {  // at most ~20 s
      pollfd p[3] = {{http_.fd, POLLIN, 0}, {dns_.fd, POLLIN, 0}, {echo_.fd, POLLIN, 0}};
      if (::poll(p, 3, 50) <= 0) continue;
      if (p[0].revents) answer_http();
      if (p[1].revents) answer_dns();
      if (p[2].revents) answer_echo();
    }
  }
  void answer_http() {
    Fd c(::accept4(http_.fd, nullptr, nullptr, SOCK_CLOEXEC));
    if (c.fd < 0) return;
    char buf[1024];
    pollfd p{c.fd, POLLIN, 0};
    if (::poll(&p, 1, 1000) > 0) (void)::recv(c.fd, buf, sizeof buf, 0);
    const char reply[] = "HTTP/1.0 204 No Content\r\nServer: test\r\n\r\n";
    (void)::send(c.fd, reply, sizeof reply - 1, MSG_NOSIGNAL);
  }
  void answer_dns() {
    char buf[1500];
    sockaddr_in from{};
    socklen_t len = sizeof from;
    ssize_t n = ::recvfrom(dns_.fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len);
    if (n < 12) return;
    ++dns_queries;
    std::string q(buf, static_cast<std::size_t>(n));
    std::string name;
    std::size_t next = 0;
    if (!read_dns_name(q, 12, &name, &next)) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      last_dns_name_ = name;
    }
    if (name == "silent.test") return;
    bool known = name == "target.test" || name == "http.test";
    std::string r = q.substr(0, next + 4);
    r[2] = static_cast<char>(0x81);
    r[3] = static_cast<char>(known ? 0x80 : 0x83);
    r[6] = 0;
    r[7] = known ? 1 : 0;
    if (known) r += std::string("\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x7f\x00\x00\x01", 16);
    (void)::sendto(dns_.fd, r.data(), r.size(), 0, reinterpret_cast<sockaddr*>(&from), len);
  }
  void answer_echo() {
    char buf[512];
    sockaddr_in from{};
    socklen_t len = sizeof from;
    ssize_t n = ::recvfrom(echo_.fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len);
    if (n > 0)
      (void)::sendto(echo_.fd, buf, static_cast<std::size_t>(n), 0, reinterpret_cast<sockaddr*>(&from), len);
  }
  Fd http_, dns_, echo_;
  std::mutex mutex_;
  std::string last_dns_name_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TargetSpec target(const std::string& arg) {
  std::string err;
  auto t = parse_target_spec(arg, &err);
  INFO(err);
  REQUIRE(t);
  return *t;
}

std::map<std::string, EgressOutcome> by_name(const std::vector<EgressOutcome>& v) {
  std::map<std::string, EgressOutcome> m;
  for (const auto& o : v) m[o.name] = o;
  return m;
}

}  // namespace

TEST_CASE("egress: connected, refused, http, dns and dns_failed, all at once", "[probe]") {
  enter_own_netns();
  Servers servers;
  Fd listener(loopback_socket(SOCK_STREAM, 8));
  int closed_port;
  {
    Fd tmp(loopback_socket(SOCK_STREAM, 1));
    closed_port = bound_port(tmp.fd);
  }
  std::string hp = std::to_string(servers.http_port());
  std::vector<TargetSpec> targets = {
      target("open=127.0.0.1:" + std::to_string(bound_port(listener.fd))),
      target("closed=127.0.0.1:" + std::to_string(closed_port)),
      target("web=http.test:" + hp + "/http"),
      target("name=target.test:53/dns"),
      target("nx=missing.test:53/dns"),
      target("nx_tcp=missing.test:80/tcp"),
  };
  ResolverSpec resolver{0x7f000001u, servers.dns_port()};
  auto results = by_name(run_egress(targets, resolver, "", Clock::now() + std::chrono::milliseconds(3000)));
  for (const auto& [name, outcome] : results)
    CHECK(outcome.result != "timeout");  // nothing waits for the deadline
  CHECK(results["open"].result == "connected");
  CHECK(results["open"].address == "127.0.0.1");
  CHECK(results["closed"].result == "refused");
  CHECK(results["closed"].err == ECONNREFUSED);
  CHECK(results["web"].result == "connected");
  CHECK(results["web"].detail == "HTTP: HTTP/1.0 204 No Content");
  CHECK(results["name"].result == "connected");
  CHECK(results["name"].address == "127.0.0.1");
  CHECK(results["nx"].result == "dns_failed");
  CHECK(results["nx"].detail.find("NXDOMAIN") != std::string::npos);
  CHECK(results["nx_tcp"].result == "dns_failed");
  CHECK(servers.dns_queries >= 4);
}

TEST_CASE(
    "egress: a full accept queue is a timeout, a silent resolver is dns_failed, a mute server connected",
    "[probe]") {
  enter_own_netns();
  Servers servers;
  // Backlog 0 and nobody accepting: after the queue fills, the kernel drops SYNs.
  Fd full(loopback_socket(SOCK_STREAM, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons(bound_port(full.fd));
  std::vector<std::unique_ptr<Fd>> fillers;
  for (int i = 0; i < 3; ++i) {
    fillers.push_back(std::make_unique<Fd>(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)));
    (void)::connect(fillers.back()->fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Fd mute(loopback_socket(SOCK_STREAM, 8));  // accepts the connection, never answers
  std::vector<TargetSpec> targets = {
      target("stuck=127.0.0.1:" + std::to_string(bound_port(full.fd))),
      target("silent=silent.test:80"),
      target("mute=127.0.0.1:" + std::to_string(bound_port(mute.fd)) + "/http"),
  };
  ResolverSpec resolver{0x7f000001u, servers.dns_port()};
  auto results = by_name(run_egress(targets, resolver, "", Clock::now() + std::chrono::milliseconds(700)));
  CHECK(results["stuck"].result == "timeout");
  CHECK(results["silent"].result == "dns_failed");
  CHECK(results["silent"].detail.find("did not answer") != std::string::npos);
  CHECK(results["mute"].result == "connected");  // reachable, even if it says nothing
  CHECK(results["mute"].detail.find("no HTTP status line") != std::string::npos);
}

TEST_CASE("egress: a target with its own deadline is given up then, the others wait for the egress deadline",
          "[probe]") {
  enter_own_netns();
  Servers servers;
  Fd full(loopback_socket(SOCK_STREAM, 0));  // backlog 0, never accepted: SYNs go unanswered
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons(bound_port(full.fd));
  std::vector<std::unique_ptr<Fd>> fillers;
  for (int i = 0; i < 3; ++i) {
    fillers.push_back(std::make_unique<Fd>(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)));
    (void)::connect(fillers.back()->fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Fd quiet(loopback_socket(SOCK_DGRAM, 0));  // bound, never read: no answer
  const std::string stuck = "127.0.0.1:" + std::to_string(bound_port(full.fd));
  const std::string silent = "127.0.0.1:" + std::to_string(bound_port(quiet.fd)) + "/udp";
  std::vector<TargetSpec> streams = {target("stuck-short=" + stuck), target("stuck-long=" + stuck),
                                     target("silent-name=silent.test:80")};
  std::vector<TargetSpec> datagrams = {target("udp-short=" + silent), target("udp-long=" + silent)};
  streams[0].deadline = std::chrono::milliseconds(150);
  streams[2].deadline = std::chrono::milliseconds(150);
  datagrams[0].deadline = std::chrono::milliseconds(150);
  const auto all = std::chrono::milliseconds(1200);
  ResolverSpec resolver{0x7f000001u, servers.dns_port()};
  auto r = by_name(run_egress(streams, resolver, "", Clock::now() + all));
  auto d = by_name(run_datagram_egress(datagrams, resolver, "", "0123456789abcdef", Clock::now() + all));
  // The short ones end at their own deadline, with what a deadline says.
  CHECK(r["stuck-short"].result == "timeout");
  CHECK(r["stuck-short"].elapsed_ms >= 140);
  CHECK(r["stuck-short"].elapsed_ms < 700);
  CHECK(r["silent-name"].result == "dns_failed");
  CHECK(r["silent-name"].elapsed_ms < 700);
  CHECK(d["udp-short"].result == "timeout");
  CHECK(d["udp-short"].elapsed_ms < 700);
  // Still three datagrams, spread over the short deadline: one lost is not all lost.
  CHECK_THAT(d["udp-short"].detail, Catch::Contains("no answer to 3 datagram(s)"));
  CHECK(servers.dns_queries >= 2);  // the silent name's query, and its retransmit before the deadline
  // The others wait for the egress deadline.
  CHECK(r["stuck-long"].result == "timeout");
  CHECK(r["stuck-long"].elapsed_ms >= 1100);
  CHECK(d["udp-long"].result == "timeout");
  CHECK(d["udp-long"].elapsed_ms >= 1100);
}

TEST_CASE("egress: no resolver means names fail; literals need none", "[probe]") {
  enter_own_netns();
  Fd listener(loopback_socket(SOCK_STREAM, 8));
  std::vector<TargetSpec> targets = {
      target("byname=target.test:80"),
      target("literal=127.0.0.1:" + std::to_string(bound_port(listener.fd))),
      target("literal_dns=127.0.0.1:53/dns"),
  };
  auto results = by_name(run_egress(targets, std::nullopt, "no IPv4 nameserver in /etc/resolv.conf",
                                    Clock::now() + std::chrono::seconds(2)));
  CHECK(results["byname"].result == "dns_failed");
  CHECK(results["byname"].detail.find("no IPv4 nameserver") != std::string::npos);
  CHECK(results["literal"].result == "connected");
  CHECK(results["literal_dns"].result == "connected");
}

TEST_CASE("egress: no route is unreachable (only inside our own namespace)", "[probe]") {
  enter_own_netns();
  if (!g_own_netns) {
    // As root the namespace must be made: a root run that cannot test this fails.
    if (::geteuid() == 0) FAIL("root could not make a network namespace for the test");
    WARN(
        "not run without root: outside our own network namespace a packet to 192.0.2.1 could leave the "
        "machine");
    return;
  }
  // Our namespace has only lo: 192.0.2.1 (TEST-NET-1) has no route, so nothing is sent.
  auto results = by_name(
      run_egress({target("nowhere=192.0.2.1:80")}, std::nullopt, "", Clock::now() + std::chrono::seconds(2)));
  CHECK(results["nowhere"].result == "unreachable");
  CHECK(results["nowhere"].err == ENETUNREACH);
}

TEST_CASE("connect errno classification", "[probe]") {
  CHECK(classify_connect_errno(ECONNREFUSED) == "refused");
  CHECK(classify_connect_errno(ETIMEDOUT) == "timeout");
  CHECK(classify_connect_errno(ENETUNREACH) == "unreachable");
  CHECK(classify_connect_errno(EHOSTUNREACH) == "unreachable");
  CHECK(classify_connect_errno(EPERM) == "unreachable");
}

TEST_CASE("datagram egress: udp answered, udp unanswered, icmp echo, exfil query with the nonce", "[probe]") {
  enter_own_netns();
  Servers servers;
  Fd closed(loopback_socket(SOCK_DGRAM, 0));  // bound, never read: no answer, no ICMP error
  const std::string lo = "127.0.0.1:";
  std::vector<TargetSpec> targets = {
      target("udp-echo=" + lo + std::to_string(servers.echo_port()) + "/udp"),
      target("udp-silent=" + lo + std::to_string(bound_port(closed.fd)) + "/udp"),
      target("ping=127.0.0.1:0/icmp"), target("exfil=zone.test:53/exfil")};
  ResolverSpec resolver{*parse_ipv4("127.0.0.1"), servers.dns_port()};
  auto r = by_name(run_datagram_egress(targets, resolver, "", "0123456789abcdef",
                                       Clock::now() + std::chrono::milliseconds(1500)));
  CHECK(r["udp-echo"].result == "connected");
  CHECK(r["udp-silent"].result == "timeout");
  CHECK(r["udp-silent"].detail.find("witness") != std::string::npos);
  // As root the kernel lets us ping (an ICMP datagram or a raw socket).
  CHECK(r["ping"].result == "connected");
  CHECK(r["exfil"].result == "dns_failed");  // the test resolver knows no such name
  CHECK(servers.last_dns_name() == "ihw-0123456789abcdef.zone.test");
  // A udp target named by a DNS name: resolved through the resolver first, as TCP's are.
  auto named = by_name(
      run_datagram_egress({target("udp-named=target.test:" + std::to_string(servers.echo_port()) + "/udp"),
                           target("udp-unknown=nosuch.test:53/udp")},
                          resolver, "", "0123456789abcdef", Clock::now() + std::chrono::milliseconds(1500)));
  CHECK(named["udp-named"].result == "connected");
  CHECK(named["udp-named"].address == "127.0.0.1");
  CHECK(named["udp-unknown"].result == "dns_failed");
  CHECK(named["udp-unknown"].detail.find("nosuch.test") != std::string::npos);
  auto no_resolver = by_name(run_datagram_egress({target("u=target.test:53/udp")}, std::nullopt, "none given",
                                                 "0123456789abcdef", Clock::now() + std::chrono::seconds(1)));
  CHECK(no_resolver["u"].result == "dns_failed");
  CHECK(icmp_checksum(reinterpret_cast<const unsigned char*>("\x08\x00\x00\x00"), 4) == 0xf7ff);
}

namespace {

// One listener per behaviour a name-checking proxy or server shows after accepting.
enum class After { answer_tls, reset, close, deny_403, answer_200 };

void behave(int listener, After after) {
  for (int i = 0; i < 40; ++i) {  // at most ~4 s
    pollfd p{listener, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    Fd c(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC));
    if (c.fd < 0) continue;
    char buf[2048];
    pollfd r{c.fd, POLLIN, 0};
    if (::poll(&r, 1, 1000) > 0) (void)::recv(c.fd, buf, sizeof buf, 0);
    std::string reply;
    if (after == After::answer_tls) reply = std::string("\x16\x03\x03\x00\x02\x02\x00", 7);
    if (after == After::deny_403) reply = "HTTP/1.1 403 Forbidden\r\n\r\nAccess denied\r\n";
    if (after == After::answer_200) reply = "HTTP/1.0 200 OK\r\n\r\nhello\n";
    if (after == After::reset) {
      linger l{1, 0};
      ::setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    if (!reply.empty()) (void)::send(c.fd, reply.data(), reply.size(), MSG_NOSIGNAL);
    return;
  }
}

}  // namespace

TEST_CASE("egress: a name-scoped target is connected only when the far side answers", "[probe]") {
  enter_own_netns();
  const std::vector<std::pair<std::string, After>> kinds = {
      {"tls_ok", After::answer_tls},    {"tls_reset", After::reset},    {"tls_closed", After::close},
      {"http_denied", After::deny_403}, {"http_ok", After::answer_200}, {"http_reset", After::reset}};
  std::vector<std::unique_ptr<Fd>> listeners;
  std::vector<std::thread> threads;
  std::vector<TargetSpec> targets;
  for (const auto& [name, after] : kinds) {
    listeners.push_back(std::make_unique<Fd>(loopback_socket(SOCK_STREAM, 4)));
    const std::string port = std::to_string(bound_port(listeners.back()->fd));
    const bool tls = name.rfind("tls", 0) == 0;
    targets.push_back(
        target(name + "=127.0.0.1:" + port + (tls ? "/tls@a.example.com" : "/http@b.example.com")));
    threads.emplace_back(behave, listeners.back()->fd, after);
  }
  auto results =
      by_name(run_egress(targets, std::nullopt, "", Clock::now() + std::chrono::milliseconds(3000)));
  for (auto& t : threads) t.join();
  CHECK(results["tls_ok"].result == "connected");
  CHECK(results["tls_ok"].detail.find("a TLS handshake record") != std::string::npos);
  CHECK(results["tls_ok"].server_name == "a.example.com");
  CHECK(results["tls_reset"].result == "reset");
  CHECK(results["tls_closed"].result == "closed");
  CHECK(results["http_denied"].result == "denied");
  CHECK(results["http_ok"].result == "connected");
  CHECK(results["http_reset"].result == "reset");
}
