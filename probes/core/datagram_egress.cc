// One state per target: open a socket (for icmp: an ICMP datagram socket, else a raw
// one), send, wait for an answer, resend up to three times (500 ms apart, or a third of
// the target's own deadline apart when that is shorter). A target whose deadline (its
// own, TargetSpec::deadline, or the egress deadline) passes without an answer reads
// "timeout" (udp, icmp) or "dns_failed" (exfil); the loop ends when every target is done.
// A udp target named by a DNS name is resolved first through the sandbox's resolver (one
// query, resent once, at most 1.5 s), as the TCP targets resolve theirs: "dns_failed" when
// that gives no address.
#include "probes/core/datagram_egress.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "probes/core/dns_packet.h"
#include "probes/core/socket_util.h"
#include "probes/core/text_util.h"

namespace isoprobe {
namespace {

constexpr int kMaxSends = 3;
constexpr auto kResend = std::chrono::milliseconds(500);

struct Datagram {
  const TargetSpec* spec = nullptr;
  EgressOutcome out;
  int fd = -1;
  bool raw = false;  // icmp through a raw socket (the kernel leaves the IP header on replies)
  bool done = false;
  int sends = 0;
  Clock::time_point next_send;
  Clock::time_point started;
  std::string payload;
  std::string query_name;  // exfil
  std::uint16_t id = 0;
  Clock::time_point deadline;  // the egress deadline, or the target's own when sooner
  // Between sends: kResend, or a third of the target's own deadline when that is shorter,
  // so a target with a short deadline still sends kMaxSends datagrams (one may be lost).
  Clock::duration resend = kResend;
};

void finish(Datagram& d, std::string result, int err, std::string detail) {
  if (d.fd >= 0) ::close(d.fd);
  d.fd = -1;
  d.done = true;
  d.out.result = std::move(result);
  d.out.err = err;
  d.out.detail = std::move(detail);
  d.out.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - d.started).count();
}

std::string echo_request(std::uint16_t id, const std::string& body) {
  std::string p(8, '\0');
  p[0] = 8;  // echo request, code 0
  p[4] = static_cast<char>(id >> 8);
  p[5] = static_cast<char>(id & 255);
  p[7] = 1;  // sequence 1
  p += body;
  const std::uint16_t sum = icmp_checksum(reinterpret_cast<const unsigned char*>(p.data()), p.size());
  p[2] = static_cast<char>(sum >> 8);
  p[3] = static_cast<char>(sum & 255);
  return p;
}

// The destination: the target's address (IPv4 or IPv6), or for exfil the resolver.
socklen_t destination(const Datagram& d, const std::optional<ResolverSpec>& resolver, sockaddr_storage& ss) {
  const TargetSpec& t = *d.spec;
  ss = sockaddr_storage{};
  if (t.ipv6) {
    auto* sa6 = reinterpret_cast<sockaddr_in6*>(&ss);
    sa6->sin6_family = AF_INET6;
    sa6->sin6_port = htons(t.port);
    std::memcpy(&sa6->sin6_addr, t.ipv6->data(), 16);
    return sizeof(sockaddr_in6);
  }
  const bool exfil = t.proto == TargetProto::exfil;
  sockaddr_in sa =
      ipv4_sockaddr(exfil ? resolver->address : t.ipv4.value_or(0), exfil ? resolver->port : t.port);
  std::memcpy(&ss, &sa, sizeof sa);
  return sizeof sa;
}

// An ICMP (or ICMPv6) datagram socket, else a raw one; -1 (and finished) when neither opens.
int open_icmp(Datagram& d) {
  const int family = d.spec->ipv6 ? AF_INET6 : AF_INET;
  const int proto = d.spec->ipv6 ? static_cast<int>(IPPROTO_ICMPV6) : static_cast<int>(IPPROTO_ICMP);
  int fd = ::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
  if (fd >= 0) return fd;
  const int dgram_err = errno;
  fd = ::socket(family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
  d.raw = fd >= 0;
  if (fd < 0)
    finish(d, "no_socket", errno,
           "ICMP datagram socket: " + errno_text(dgram_err) + "; raw ICMP socket: " + errno_text(errno));
  return fd;
}

// Opens the socket the target needs and connects it; false (and finished) when it cannot.
bool open_socket(Datagram& d, const std::optional<ResolverSpec>& resolver) {
  const TargetSpec& t = *d.spec;
  if (t.proto == TargetProto::exfil && !resolver) return finish(d, "dns_failed", 0, "no resolver"), false;
  if (t.proto == TargetProto::icmp) {
    d.fd = open_icmp(d);
    if (d.fd < 0) return false;
  } else {
    d.fd = ::socket(t.ipv6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (d.fd < 0) return finish(d, "unreachable", errno, "socket: " + errno_text(errno)), false;
  }
  sockaddr_storage sa;
  const socklen_t len = destination(d, resolver, sa);
  d.out.address = t.ipv6 ? format_ipv6(*t.ipv6)
                         : format_ipv4(ntohl(reinterpret_cast<const sockaddr_in*>(&sa)->sin_addr.s_addr));
  if (::connect(d.fd, reinterpret_cast<sockaddr*>(&sa), len) != 0) {
    const int e = errno;
    return finish(d, classify_connect_errno(e), e, "connect: " + errno_text(e)), false;
  }
  return true;
}

void start(Datagram& d, const std::optional<ResolverSpec>& resolver, const std::string& note,
           const std::string& nonce, std::mt19937& rng) {
  d.started = Clock::now();
  const TargetSpec& t = *d.spec;
  d.id = static_cast<std::uint16_t>(rng());
  const std::string tag = "ihw-" + nonce;
  if (t.proto == TargetProto::exfil) {
    d.query_name = tag + "." + t.host;
    DnsQuery q = build_dns_query(d.id, d.query_name);
    if (q.bytes.empty()) return finish(d, "dns_failed", 0, q.error);
    d.payload = std::move(q.bytes);
    if (!resolver) return finish(d, "dns_failed", 0, "no resolver: " + note);
  } else if (t.proto == TargetProto::icmp) {
    d.payload = echo_request(d.id, tag + " " + t.name);
    if (t.ipv6) {  // ICMPv6 echo request; the kernel computes the checksum over its pseudo-header
      d.payload[0] = static_cast<char>(128);
      d.payload[2] = d.payload[3] = 0;
    }
  } else {
    d.payload = "isoprobe " + tag + " " + t.name + "\n";
  }
  if (!open_socket(d, resolver)) return;
  if (d.raw) d.out.detail = "raw ICMP socket";
}

// The IPv4 address of a udp target named by a DNS name, from the resolver; "" when found
// (in out), else why not.
std::string resolve_udp_host(const TargetSpec& t, const std::optional<ResolverSpec>& resolver,
                             std::uint16_t id, Clock::time_point deadline, std::uint32_t& out) {
  if (!resolver) return "no resolver";
  DnsQuery q = build_dns_query(id, t.host);
  if (q.bytes.empty()) return q.error;
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return "socket: " + errno_text(errno);
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } closer{fd};
  sockaddr_in sa = ipv4_sockaddr(resolver->address, resolver->port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
    return "resolver: " + errno_text(errno);
  const auto until = std::min(deadline, Clock::now() + std::chrono::milliseconds(1500));
  for (int sends = 0; sends < 2 && Clock::now() < until; ++sends) {
    (void)::send(fd, q.bytes.data(), q.bytes.size(), MSG_NOSIGNAL);
    const auto next = std::min(until, Clock::now() + std::chrono::milliseconds(750));
    while (Clock::now() < next) {
      pollfd p{fd, POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count();
      if (::poll(&p, 1, static_cast<int>(std::max<long long>(left, 1))) <= 0) continue;
      unsigned char buf[1500];
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
        return "resolver: " + errno_text(errno);
      }
      DnsResponse r = parse_dns_response(
          std::string_view(reinterpret_cast<char*>(buf), static_cast<std::size_t>(n)), id, t.host);
      if (!r.ok) continue;
      if (r.rcode != 0 || r.addresses.empty()) return "resolver answered rcode " + std::to_string(r.rcode);
      out = r.addresses.front();
      return "";
    }
  }
  return "the resolver did not answer";
}

void send_once(Datagram& d) {
  ++d.sends;
  d.next_send = Clock::now() + d.resend;
  if (::send(d.fd, d.payload.data(), d.payload.size(), MSG_NOSIGNAL) >= 0) return;
  const int e = errno;
  if (e == EAGAIN || e == EWOULDBLOCK || e == EINTR) return;
  finish(d, d.spec->proto == TargetProto::exfil ? "dns_failed" : classify_connect_errno(e), e,
         "send: " + errno_text(e));
}

// An ICMP echo reply to our request (raw sockets see the IP header and every ICMP packet).
bool is_our_echo_reply(const Datagram& d, const unsigned char* p, std::size_t n) {
  if (d.spec->ipv6) {  // no IP header on ICMPv6 sockets, raw or not
    if (d.raw && (n < 8 || ((p[4] << 8) | p[5]) != d.id)) return false;
    return n >= 8 && p[0] == 129;
  }
  if (d.raw) {
    if (n < 20) return false;
    const std::size_t ihl = static_cast<std::size_t>(p[0] & 15) * 4;
    if (n < ihl + 8) return false;
    p += ihl;
    n -= ihl;
    const std::uint16_t id = static_cast<std::uint16_t>((p[4] << 8) | p[5]);
    if (id != d.id) return false;
  }
  return n >= 8 && p[0] == 0;
}

void on_readable(Datagram& d) {
  unsigned char buf[2048];
  for (int i = 0; i < 16 && !d.done; ++i) {
    const ssize_t n = ::recv(d.fd, buf, sizeof buf, 0);
    if (n < 0) {
      const int e = errno;
      if (e == EAGAIN || e == EWOULDBLOCK || e == EINTR) return;
      return finish(d, d.spec->proto == TargetProto::exfil ? "dns_failed" : classify_connect_errno(e), e,
                    "recv: " + errno_text(e));
    }
    const auto size = static_cast<std::size_t>(n);
    if (d.spec->proto == TargetProto::icmp) {
      if (is_our_echo_reply(d, buf, size))
        return finish(d, "connected", 0, std::string(d.raw ? "raw ICMP socket: " : "") + "echo reply");
      continue;
    }
    if (d.spec->proto == TargetProto::udp)
      return finish(d, "connected", 0, "answered " + std::to_string(n) + " bytes");
    DnsResponse r =
        parse_dns_response(std::string_view(reinterpret_cast<char*>(buf), size), d.id, d.query_name);
    if (!r.ok) continue;
    if (r.rcode == 0 && !r.addresses.empty())
      return finish(d, "connected", 0,
                    d.query_name + " resolved to " + format_ipv4(r.addresses.front()) + ": the name left");
    return finish(d, "dns_failed", 0, d.query_name + ": rcode " + std::to_string(r.rcode));
  }
}

// The deadline passed with no answer.
void give_up(Datagram& d) {
  finish(d, d.spec->proto == TargetProto::exfil ? "dns_failed" : "timeout", 0,
         "no answer to " + std::to_string(d.sends) +
             " datagram(s) before the deadline (only an outside witness can tell whether they arrived)");
}

std::string ability(int domain, int type, int protocol) {
  const int fd = ::socket(domain, type | SOCK_CLOEXEC, protocol);
  if (fd < 0) return errno_text(errno);
  ::close(fd);
  return "ok";
}

}  // namespace

std::uint16_t icmp_checksum(const unsigned char* data, std::size_t size) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i + 1 < size; i += 2)
    sum += static_cast<std::uint32_t>((data[i] << 8) | data[i + 1]);
  if (size % 2) sum += static_cast<std::uint32_t>(data[size - 1] << 8);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

nlohmann::json socket_abilities() {
  return {{"icmp_datagram", ability(AF_INET, SOCK_DGRAM, IPPROTO_ICMP)},
          {"raw_icmp", ability(AF_INET, SOCK_RAW, IPPROTO_ICMP)},
          {"packet", ability(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL))}};
}

std::vector<EgressOutcome> run_datagram_egress(const std::vector<TargetSpec>& targets,
                                               const std::optional<ResolverSpec>& resolver,
                                               const std::string& resolver_note, const std::string& nonce,
                                               Clock::time_point deadline) {
  std::random_device seed;
  std::mt19937 rng(seed());
  std::vector<Datagram> work(targets.size());
  std::vector<TargetSpec> specs = targets;  // a named udp target gets its resolved address
  for (std::size_t i = 0; i < targets.size(); ++i) {
    work[i].spec = &specs[i];
    work[i].out = EgressOutcome{targets[i].name, targets[i].host, std::string(proto_name(targets[i].proto)),
                                targets[i].port};
    const auto own = targets[i].deadline;
    work[i].deadline = own ? std::min(deadline, Clock::now() + *own) : deadline;
    if (own) work[i].resend = std::min<Clock::duration>(kResend, *own / kMaxSends);
    if (specs[i].proto == TargetProto::udp && !specs[i].ipv4 && !specs[i].ipv6) {
      work[i].started = Clock::now();
      std::uint32_t address = 0;
      const std::string why =
          resolve_udp_host(specs[i], resolver, static_cast<std::uint16_t>(rng()), work[i].deadline, address);
      if (!why.empty()) {
        finish(work[i], "dns_failed", 0, specs[i].host + ": " + why + (resolver ? "" : ": " + resolver_note));
        continue;
      }
      specs[i].ipv4 = address;
    }
    start(work[i], resolver, resolver_note, nonce, rng);
  }
  std::vector<pollfd> fds;
  std::vector<std::size_t> owner;
  for (int round = 0; round < 10000 && Clock::now() < deadline; ++round) {
    const auto now = Clock::now();
    fds.clear();
    owner.clear();
    auto wake = deadline;
    for (std::size_t i = 0; i < work.size(); ++i) {
      Datagram& d = work[i];
      if (!d.done && now >= d.deadline) give_up(d);
      if (!d.done && d.sends < kMaxSends && now >= d.next_send) send_once(d);
      if (d.done) continue;
      wake = std::min(wake, d.deadline);
      if (d.sends < kMaxSends) wake = std::min(wake, d.next_send);
      fds.push_back(pollfd{d.fd, POLLIN, 0});
      owner.push_back(i);
    }
    if (fds.empty()) break;
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count() + 1;
    const int rc = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<long long>(wait, 0)));
    if (rc < 0 && errno != EINTR) break;
    for (std::size_t k = 0; rc > 0 && k < fds.size(); ++k)
      if (fds[k].revents) on_readable(work[owner[k]]);
  }
  std::vector<EgressOutcome> out;
  out.reserve(work.size());
  for (Datagram& d : work) {
    if (!d.done) give_up(d);
    out.push_back(std::move(d.out));
  }
  return out;
}

}  // namespace isoprobe
