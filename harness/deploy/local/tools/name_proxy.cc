// A transparent proxy in the node namespace that checks a request's name before it lets it
// out, as Cilium's proxy does for allowDomains (TLS server name on 443, HTTP Host on 80).
//
// nft (deploy/local/nft_rules.h) DNATs a sandbox's new TCP connections to an allow-listed
// address on 80 or 443 to --listen. For each connection the proxy: reads the original
// destination (SO_ORIGINAL_DST) and the sandbox's rules (--rules DIR/<sandbox address>);
// reads the first bytes (at most 16 KiB, at most 3 s) until the ClientHello's server name
// or the request's Host is known; forwards only when that name matches one of the
// sandbox's patterns, and otherwise resets the connection (SO_LINGER 0). A forwarded
// connection is opened from the sandbox's own address (IP_TRANSPARENT; the node routes
// marked replies back to the local socket), so the world's witness sees the sandbox, not
// the node; then bytes are relayed both ways for at most 30 s and 4 MiB each way. Each
// decision is a line of --decisions (log_decision below): the drop point's record of a
// request the proxy stopped, read by the local backend (deploy/local/drop_point.h).
//
// Bounded: at most --max-connections at once (one thread each; past it, new ones are
// reset), every step under a deadline, and the process exits after --max-seconds.
#include "harness/deploy/local/tools/name_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/netfilter_ipv4.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "probes/core/tls_hello.h"

namespace isoharness::world_helper {

using isoprobe::PeekStatus;

NameRules parse_name_rules(std::string_view text) {
  NameRules r;
  std::size_t pos = 0;
  for (int lines = 0; pos < text.size() && lines < 4096; ++lines) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("allow ", 0) == 0 && line.size() > 6) r.patterns.emplace_back(line.substr(6));
    if (line == "skip-sni") r.skip_sni = true;
    if (line == "skip-host") r.skip_host = true;
  }
  return r;
}

NameDecision decide(const NameRules& rules, int dport, std::string_view first_bytes, bool more_possible) {
  const bool tls = dport == 443;
  if (!tls && dport != 80) return {"reset", "port " + std::to_string(dport) + " is not proxied"};
  if (tls ? rules.skip_sni : rules.skip_host)
    return {"forward", std::string(tls ? "server name" : "Host") + " not checked (weakened)"};
  const auto peek =
      tls ? isoprobe::peek_client_hello_sni(first_bytes) : isoprobe::peek_http_host(first_bytes);
  const std::string what = tls ? "TLS server name" : "HTTP Host";
  if (peek.status == PeekStatus::need_more)
    return more_possible ? NameDecision{"", ""} : NameDecision{"reset", "no complete " + what + " in time"};
  if (peek.status == PeekStatus::absent) return {"reset", "no " + what};
  if (peek.status == PeekStatus::not_this_protocol)
    return {"reset", "not " + std::string(tls ? "TLS" : "HTTP")};
  for (const auto& p : rules.patterns)
    if (isoprobe::allow_pattern_matches(p, peek.name))
      return {"forward", what + " " + peek.name + " matches " + p};
  return {"reset", what + " " + peek.name + " is not allowed"};
}

namespace {

using Clock = std::chrono::steady_clock;

struct ProxyOptions {
  sockaddr_in listen{};
  std::string rules_dir;
  std::string decisions;  // the decision log (--decisions), one line per connection
  long max_seconds = 3600;
  int max_connections = 64;
};

std::atomic<int> g_active{0};

// The decision log: "P1 <unix ms> <forward|reset> <source> <destination> <port> <name|->"
// per connection, appended with one write each (O_APPEND: lines from several threads do not
// interleave). At most kMaxDecisions lines; then one "full" line and no more.
constexpr long kMaxDecisions = 200000;
int g_decisions_fd = -1;
std::atomic<long> g_decision_lines{0};

long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void log_decision(bool forwarded, const std::string& source, const std::string& destination, int port,
                  const std::string& name) {
  const long n = ++g_decision_lines;
  if (g_decisions_fd < 0 || n > kMaxDecisions + 1) return;
  std::string line = "P1 " + std::to_string(now_ms()) + " ";
  if (n == kMaxDecisions + 1)
    line += "full - - 0 -\n";
  else
    line += std::string(forwarded ? "forward " : "reset ") + source + " " + destination + " " +
            std::to_string(port) + " " + (name.empty() ? "-" : name) + "\n";
  (void)!::write(g_decisions_fd, line.data(), line.size());
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "isoharness-world-helper name-proxy: %s\n", what.c_str());
  std::exit(2);
}

void reset_close(int fd) {
  linger l{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  ::close(fd);
}

std::string address_text(const sockaddr_in& a) {
  char buf[INET_ADDRSTRLEN] = "?";
  ::inet_ntop(AF_INET, &a.sin_addr, buf, sizeof buf);
  return buf;
}

// The sandbox's rules file, read bounded; empty rules (so: reset) when there is none.
NameRules rules_for(const std::string& dir, const std::string& source) {
  const std::string path = dir + "/" + source;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text(65536, '\0');
  const ssize_t n = ::read(fd, text.data(), text.size());
  ::close(fd);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return parse_name_rules(text);
}

// Reads until the rules decide, the 16 KiB cap or the 3 s deadline.
NameDecision read_and_decide(int fd, const NameRules& rules, int dport, std::string& got) {
  const auto until = Clock::now() + std::chrono::seconds(3);
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    bool more = left > 0 && got.size() < 16384 + 5;
    if (more) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) > 0) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0)
          more = false;
        else
          got.append(buf, static_cast<std::size_t>(n));
      }
    }
    NameDecision d = decide(rules, dport, got, more && Clock::now() < until);
    if (!d.verdict.empty()) return d;
  }
}

// A connection to dst from the sandbox's own address (falls back to the node's address,
// said in the log, when the transparent bind is refused). -1 when it cannot connect in 3 s.
int connect_upstream(const sockaddr_in& source, const sockaddr_in& dst, std::string& note) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  sockaddr_in from = source;
  from.sin_port = 0;
  if (::setsockopt(fd, SOL_IP, IP_TRANSPARENT, &one, sizeof one) != 0 ||
      ::bind(fd, reinterpret_cast<const sockaddr*>(&from), sizeof from) != 0)
    note = std::string("; not transparent: ") + std::strerror(errno);
  timeval tv{3, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&dst), sizeof dst) != 0) {
    note += std::string("; upstream: ") + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

// Copies both ways until both ends closed, 30 s, or 4 MiB each way.
void relay(int a, int b) {
  const auto until = Clock::now() + std::chrono::seconds(30);
  std::size_t moved[2] = {0, 0};
  bool open[2] = {true, true};
  char buf[16384];
  while ((open[0] || open[1]) && Clock::now() < until) {
    pollfd p[2] = {{a, static_cast<short>(open[0] ? POLLIN : 0), 0},
                   {b, static_cast<short>(open[1] ? POLLIN : 0), 0}};
    if (::poll(p, 2, 500) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (!open[i] || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::recv(p[i].fd, buf, sizeof buf, 0);
      const int other = i == 0 ? b : a;
      if (n <= 0 || moved[i] > (4u << 20) ||
          ::send(other, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL) != n) {
        open[i] = false;
        ::shutdown(other, SHUT_WR);
        continue;
      }
      moved[i] += static_cast<std::size_t>(n);
    }
  }
}

void handle(int fd, const std::string& rules_dir) {
  sockaddr_in peer{}, dst{};
  socklen_t len = sizeof peer;
  ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len);
  len = sizeof dst;
  if (::getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &dst, &len) != 0) {
    std::fprintf(stderr, "%s: no original destination, reset\n", address_text(peer).c_str());
    return reset_close(fd);
  }
  const std::string where =
      address_text(peer) + " -> " + address_text(dst) + ":" + std::to_string(ntohs(dst.sin_port));
  std::string got;
  const NameDecision d =
      read_and_decide(fd, rules_for(rules_dir, address_text(peer)), ntohs(dst.sin_port), got);
  std::string note;
  const int up = d.verdict == "forward" ? connect_upstream(peer, dst, note) : -1;
  std::fprintf(stderr, "%s: %s (%s%s)\n", where.c_str(), up >= 0 ? "forwarded" : "reset", d.why.c_str(),
               note.c_str());
  log_decision(up >= 0, address_text(peer), address_text(dst), ntohs(dst.sin_port),
               isoprobe::presented_name(got));
  if (up < 0) return reset_close(fd);
  if (::send(up, got.data(), got.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(got.size())) relay(fd, up);
  ::close(up);
  ::close(fd);
}

ProxyOptions parse_options(const std::vector<std::string>& args) {
  ProxyOptions o;
  std::string listen;
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i] == "--listen")
      listen = args[i + 1];
    else if (args[i] == "--rules")
      o.rules_dir = args[i + 1];
    else if (args[i] == "--decisions")
      o.decisions = args[i + 1];
    else if (args[i] == "--max-seconds")
      o.max_seconds = std::strtol(args[i + 1].c_str(), nullptr, 10);
    else if (args[i] == "--max-connections")
      o.max_connections = static_cast<int>(std::strtol(args[i + 1].c_str(), nullptr, 10));
    else if (args[i] != "--tag")
      fail("unknown option " + args[i]);
  }
  const auto colon = listen.rfind(':');
  o.listen.sin_family = AF_INET;
  const long port = colon == std::string::npos ? 0 : std::strtol(listen.c_str() + colon + 1, nullptr, 10);
  if (port <= 0 || port > 65535 ||
      ::inet_pton(AF_INET, listen.substr(0, colon).c_str(), &o.listen.sin_addr) != 1)
    fail("--listen ADDR:PORT is required");
  o.listen.sin_port = htons(static_cast<std::uint16_t>(port));
  if (o.rules_dir.empty() || o.max_seconds <= 0 || o.max_connections <= 0) fail("--rules DIR is required");
  return o;
}

}  // namespace

int cmd_name_proxy(const std::vector<std::string>& args) {
  const ProxyOptions o = parse_options(args);
  if (!o.decisions.empty()) {
    g_decisions_fd = ::open(o.decisions.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (g_decisions_fd < 0) fail("cannot open " + o.decisions + ": " + std::strerror(errno));
  }
  const int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (lfd < 0 || ::bind(lfd, reinterpret_cast<const sockaddr*>(&o.listen), sizeof o.listen) != 0 ||
      ::listen(lfd, 64) != 0)
    fail(std::string("cannot listen: ") + std::strerror(errno));
  const auto until = Clock::now() + std::chrono::seconds(o.max_seconds);
  while (Clock::now() < until) {
    pollfd p{lfd, POLLIN, 0};
    if (::poll(&p, 1, 1000) <= 0) continue;
    const int fd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    if (g_active.load() >= o.max_connections) {
      reset_close(fd);
      continue;
    }
    ++g_active;
    std::thread([fd, dir = o.rules_dir] {
      handle(fd, dir);
      --g_active;
    }).detach();
  }
  return 0;
}

}  // namespace isoharness::world_helper
