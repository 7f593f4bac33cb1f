// isoharness-world-helper witness: the local world's outside witness.
//
// It runs in the world namespace, the stand-in for the internet, and writes one line per
// thing that arrived from outside the world (docs/CONTRACTS.md, "Witness log"):
//   - a packet socket on the world's only link to the node sees every IPv4 and IPv6 packet the
//     node's egress policy let through: TCP SYNs (without ACK), UDP datagrams and ICMP
//     echo requests, each with its source, destination, port and the nonce found in its
//     payload ("ihw-" followed by 8-32 hex digits), whatever address it was sent to;
//   - a UDP DNS server on the canary zone's address answers every name in the zone with
//     the canary host's address and logs the name (an item resolver that forwards the
//     zone brings the sandbox's query here: data leaving through DNS);
//   - the canary host answers UDP on its ports (so a sandbox can tell it got through).
// Bounded: at most kMaxLines lines, after them one "full" line and no more logging; one
// source (a sandbox, or the resolver that asks for it) gets at most kMaxLinesPerSource of
// them, after which one "quota" line names it and it is logged no more, so one sandbox
// cannot fill the log for the others; every datagram read is at most 64 KiB; the process
// exits after --max-seconds. A "heartbeat" line every kHeartbeatMs says it is alive: a probe
// window its heartbeats do not cover is not judged on (harness/deploy/witness_log.h). Before
// each heartbeat it logs what is waiting on its sockets, so a reader that sees a heartbeat
// written after it asked knows that whatever had reached the witness by then is logged.
#include "harness/deploy/local/tools/witness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "probes/core/tls_hello.h"

namespace isoharness::world_helper {
namespace {

using Clock = std::chrono::steady_clock;
constexpr long kMaxLines = 200000;
constexpr long kMaxLinesPerSource = 10000;
constexpr std::size_t kMaxSources = 4096;  // sources counted; a new one past them shares one quota
constexpr long long kHeartbeatMs = 250;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "isoharness-world-helper witness: %s\n", what.c_str());
  std::exit(2);
}

struct Log {
  int fd = -1;
  long lines = 0;
  bool full = false;
  std::map<std::string, long> per_source;
};

long long unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Whether `src` may have one more line: false once it has had its share (the line that
// takes it over the share is a "quota" line naming it).
bool within_quota(Log& log, const std::string& src, std::string& line) {
  if (src == "-") return true;  // the witness's own lines
  const std::string key = log.per_source.size() < kMaxSources || log.per_source.count(src) ? src : "(others)";
  const long used = ++log.per_source[key];
  if (used <= kMaxLinesPerSource) return true;
  if (used == kMaxLinesPerSource + 1) line += "quota " + src + " - 0 - -\n";
  return false;
}

void write_line(Log& log, const std::string& kind, const std::string& src, const std::string& dst, int port,
                const std::string& nonce, const std::string& name) {
  if (log.full) return;
  std::string line = "W1 " + std::to_string(unix_ms()) + " ";
  if (!within_quota(log, src, line)) {
    if (line.back() == '\n' && ++log.lines <= kMaxLines) (void)!::write(log.fd, line.data(), line.size());
    return;
  }
  if (++log.lines > kMaxLines) {
    log.full = true;
    line += "full - - 0 - -\n";
  } else {
    line += kind + " " + src + " " + dst + " " + std::to_string(port) + " " + (nonce.empty() ? "-" : nonce) +
            " " + (name.empty() ? "-" : name) + "\n";
  }
  (void)!::write(log.fd, line.data(), line.size());
}

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// The first "ihw-<8..32 hex>" in the bytes.
std::string find_nonce(const unsigned char* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), std::min<std::size_t>(size, 1024));
  for (std::size_t at = text.find("ihw-"); at != std::string_view::npos; at = text.find("ihw-", at + 1)) {
    std::size_t end = at + 4;
    while (end < text.size() && end - at - 4 < 32 && is_hex(text[end])) ++end;
    if (end - at - 4 >= 8) return std::string(text.substr(at + 4, end - at - 4));
  }
  return "";
}

std::string ntop4(const unsigned char* p) {
  char buf[INET_ADDRSTRLEN];
  return ::inet_ntop(AF_INET, p, buf, sizeof buf) ? buf : "?";
}

// A TCP segment: a SYN (without ACK) opens a connection. A segment whose first bytes carry
// the probe's nonce (find_nonce reads at most 1 KiB) ties the connection to its probe run,
// whatever source address it arrives from; one that presents a name (TLS server name, HTTP
// Host) says which of several requests to one address and port it is.
void record_tcp(Log& log, const std::string& src, const std::string& dst, const unsigned char* l4,
                std::size_t left) {
  const bool syn = (l4[13] & 0x02) != 0, ack = (l4[13] & 0x10) != 0;
  const int port = (l4[2] << 8) | l4[3];
  if (syn && !ack) return write_line(log, "tcp-syn", src, dst, port, "", "");
  const std::size_t data = static_cast<std::size_t>(l4[12] >> 4) * 4;
  if (syn || data < 20 || data >= left) return;
  const std::string nonce = find_nonce(l4 + data, left - data);
  const std::string name = isoprobe::presented_name(
      std::string_view(reinterpret_cast<const char*>(l4 + data), std::min<std::size_t>(left - data, 16384)));
  if (!nonce.empty() || !name.empty()) write_line(log, "tcp-data", src, dst, port, nonce, name);
}

std::string question_name(const unsigned char* q, std::size_t n, std::size_t& end);

// A UDP datagram: the nonce in its payload; to port 53, the DNS question's name too, so a
// lookup is known by the name it asks, not only by the nonce it may carry.
void record_udp(Log& log, const std::string& src, const std::string& dst, const unsigned char* l4,
                std::size_t left) {
  const int port = (l4[2] << 8) | l4[3];
  std::size_t end = 0;
  const std::string name = port == 53 && left > 8 ? question_name(l4 + 8, left - 8, end) : "";
  write_line(log, "udp", src, dst, port, find_nonce(l4 + 8, left - 8), name);
}

// One IPv4 packet from the packet socket.
void record_ipv4(Log& log, const unsigned char* p, std::size_t n) {
  if (n < 20 || (p[0] >> 4) != 4) return;
  const std::size_t ihl = static_cast<std::size_t>(p[0] & 15) * 4;
  const unsigned frag = ((p[6] & 0x1fU) << 8) | p[7];
  if (ihl < 20 || n < ihl || frag != 0) return;  // later fragments carry no header
  const std::string src = ntop4(p + 12), dst = ntop4(p + 16);
  const unsigned char* l4 = p + ihl;
  const std::size_t left = n - ihl;
  if (p[9] == IPPROTO_TCP && left >= 20) {
    record_tcp(log, src, dst, l4, left);
  } else if (p[9] == IPPROTO_UDP && left >= 8) {
    record_udp(log, src, dst, l4, left);
  } else if (p[9] == IPPROTO_ICMP && left >= 8 && l4[0] == 8) {
    write_line(log, "icmp-echo", src, dst, 0, find_nonce(l4 + 8, left - 8), "");
  }
}

std::string ntop6(const unsigned char* p) {
  char buf[INET6_ADDRSTRLEN];
  return ::inet_ntop(AF_INET6, p, buf, sizeof buf) ? buf : "?";
}

// One IPv6 packet: TCP, UDP or ICMPv6 right after the fixed header (a packet with extension
// headers first is not recorded; the world's policy drops them for sandboxes anyway).
void record_ipv6(Log& log, const unsigned char* p, std::size_t n) {
  if (n < 40 || (p[0] >> 4) != 6) return;
  const std::string src = ntop6(p + 8), dst = ntop6(p + 24);
  const unsigned char* l4 = p + 40;
  const std::size_t left = n - 40;
  if (p[6] == IPPROTO_TCP && left >= 20) {
    record_tcp(log, src, dst, l4, left);
  } else if (p[6] == IPPROTO_UDP && left >= 8) {
    record_udp(log, src, dst, l4, left);
  } else if (p[6] == IPPROTO_ICMPV6 && left >= 8 && l4[0] == 128) {
    write_line(log, "icmp-echo", src, dst, 0, find_nonce(l4 + 8, left - 8), "");
  }
}

int open_packet_socket(const std::string& iface) {
  int fd = ::socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, htons(ETH_P_ALL));
  if (fd < 0) fail(std::string("packet socket: ") + std::strerror(errno));
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ETH_P_ALL);
  sll.sll_ifindex = static_cast<int>(::if_nametoindex(iface.c_str()));
  if (sll.sll_ifindex == 0) fail("no interface " + iface);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sll), sizeof sll) != 0)
    fail("bind the packet socket to " + iface + ": " + std::strerror(errno));
  return fd;
}

// A UDP socket bound to an IPv4 or IPv6 address.
int open_udp(const std::string& addr, int port) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(sockaddr_in);
  auto* sa = reinterpret_cast<sockaddr_in*>(&ss);
  auto* sa6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (::inet_pton(AF_INET, addr.c_str(), &sa->sin_addr) == 1) {
    sa->sin_family = AF_INET;
    sa->sin_port = htons(static_cast<std::uint16_t>(port));
  } else if (::inet_pton(AF_INET6, addr.c_str(), &sa6->sin6_addr) == 1) {
    sa6->sin6_family = AF_INET6;
    sa6->sin6_port = htons(static_cast<std::uint16_t>(port));
    len = sizeof(sockaddr_in6);
  } else {
    fail("bad address " + addr);
  }
  int fd = ::socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0)
    fail("cannot bind udp " + addr + ":" + std::to_string(port) + ": " + std::strerror(errno));
  return fd;
}

// The question name of a DNS query, lower-cased; empty when malformed. `end` gets the
// offset just past the question.
std::string question_name(const unsigned char* q, std::size_t n, std::size_t& end) {
  std::string name;
  std::size_t at = 12;
  for (int labels = 0; labels < 128 && at < n; ++labels) {
    const std::size_t len = q[at];
    if (len == 0) {
      end = at + 5;  // the root label, QTYPE, QCLASS
      return end <= n && !name.empty() ? name : "";
    }
    if (len > 63 || at + 1 + len > n || name.size() + len > 253) return "";
    if (!name.empty()) name += '.';
    for (std::size_t i = 0; i < len; ++i) {
      char c = static_cast<char>(q[at + 1 + i]);
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
      name += ok ? c : '?';
    }
    at += 1 + len;
  }
  return "";
}

bool in_zone(const std::string& name, const std::string& zone) {
  return name == zone || (name.size() > zone.size() &&
                          name.compare(name.size() - zone.size() - 1, std::string::npos, "." + zone) == 0);
}

// Answers a query for a name in the zone with an A record (the canary host), anything else
// with REFUSED; logs the name.
void serve_dns(Log& log, int fd, const std::string& zone, const std::string& canary) {
  unsigned char q[1500];
  sockaddr_in from{};
  socklen_t flen = sizeof from;
  ssize_t n = ::recvfrom(fd, q, sizeof q, 0, reinterpret_cast<sockaddr*>(&from), &flen);
  if (n < 12) return;
  std::size_t end = 0;
  const std::string name = question_name(q, static_cast<std::size_t>(n), end);
  write_line(log, "dns", ntop4(reinterpret_cast<unsigned char*>(&from.sin_addr)), zone, 53,
             find_nonce(reinterpret_cast<const unsigned char*>(name.data()), name.size()),
             name.empty() ? "?" : name);
  if (name.empty() || (q[2] & 0x80) != 0) return;
  std::string a(reinterpret_cast<char*>(q), end);
  const bool ours = in_zone(name, zone);
  const bool want_a = q[end - 4] == 0 && q[end - 3] == 1;
  a[2] = static_cast<char>(0x84 | (q[2] & 0x01));  // QR, AA, keep RD
  a[3] = static_cast<char>(ours ? 0 : 5);          // NOERROR or REFUSED
  a[4] = 0, a[5] = 1, a[6] = 0, a[7] = (ours && want_a) ? 1 : 0, a[8] = a[9] = a[10] = a[11] = 0;
  if (ours && want_a) {
    unsigned char rr[16] = {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4};
    ::inet_pton(AF_INET, canary.c_str(), rr + 12);
    a.append(reinterpret_cast<char*>(rr), sizeof rr);
  }
  ::sendto(fd, a.data(), a.size(), 0, reinterpret_cast<sockaddr*>(&from), flen);
}

// The canary host's UDP ports answer one line, so a sandbox can tell its datagram arrived.
void serve_udp_echo(int fd) {
  unsigned char buf[2048];
  sockaddr_storage from{};
  socklen_t flen = sizeof from;
  ssize_t n = ::recvfrom(fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &flen);
  if (n < 0) return;
  static const char reply[] = "isoharness witness: received\n";
  ::sendto(fd, reply, sizeof reply - 1, 0, reinterpret_cast<sockaddr*>(&from), flen);
}

struct Options {
  std::string log_path, iface = "to-node", zone, zone_address, canary, canary6;
  std::vector<int> canary_udp_ports;
  long max_seconds = 3600;
};

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    const std::string& k = args[i];
    const std::string& v = args[i + 1];
    if (k == "--log")
      o.log_path = v;
    else if (k == "--iface")
      o.iface = v;
    else if (k == "--zone")
      o.zone = v;
    else if (k == "--zone-address")
      o.zone_address = v;
    else if (k == "--canary")
      o.canary = v;
    else if (k == "--canary6")
      o.canary6 = v;
    else if (k == "--canary-udp-port")
      o.canary_udp_ports.push_back(std::atoi(v.c_str()));
    else if (k == "--max-seconds")
      o.max_seconds = std::atol(v.c_str());
    else if (k != "--tag")
      fail("unknown option " + k);
  }
  if (o.log_path.empty() || o.zone.empty() || o.zone_address.empty() || o.canary.empty())
    fail("needs --log, --zone, --zone-address and --canary");
  return o;
}

// 16 random hex digits ("-" when the kernel gives no random bytes).
std::string random_hex() {
  unsigned char bytes[8];
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) return "-";
  std::string hex;
  for (const unsigned char b : bytes) {
    hex += "0123456789abcdef"[b >> 4];
    hex += "0123456789abcdef"[b & 15];
  }
  return hex;
}

// One round: waits up to timeout_ms for any socket, then logs the packets and answers the
// queries that are there (at most 64 packets). Whether anything was there.
bool serve_ready(Log& log, const Options& o, std::vector<pollfd>& fds, int timeout_ms) {
  if (::poll(fds.data(), fds.size(), timeout_ms) <= 0) return false;
  static unsigned char pkt[65536];
  for (int i = 0; i < 64 && (fds[0].revents & POLLIN); ++i) {  // drain, bounded per round
    sockaddr_ll from{};
    socklen_t flen = sizeof from;
    ssize_t n =
        ::recvfrom(fds[0].fd, pkt, sizeof pkt, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &flen);
    if (n < 0) break;
    if (from.sll_pkttype == PACKET_OUTGOING) continue;
    if (from.sll_protocol == htons(ETH_P_IP)) record_ipv4(log, pkt, static_cast<std::size_t>(n));
    if (from.sll_protocol == htons(ETH_P_IPV6)) record_ipv6(log, pkt, static_cast<std::size_t>(n));
  }
  if (fds[1].revents & POLLIN) serve_dns(log, fds[1].fd, o.zone, o.canary);
  for (std::size_t i = 2; i < fds.size(); ++i)
    if (fds[i].revents & POLLIN) serve_udp_echo(fds[i].fd);
  return true;
}

}  // namespace

int cmd_witness(const std::vector<std::string>& args) {
  const Options o = parse_options(args);
  Log log;
  log.fd = ::open(o.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log.fd < 0) fail("cannot open " + o.log_path + ": " + std::strerror(errno));
  std::vector<pollfd> fds = {{open_packet_socket(o.iface), POLLIN, 0},
                             {open_udp(o.zone_address, 53), POLLIN, 0}};
  for (int port : o.canary_udp_ports) {
    fds.push_back({open_udp(o.canary, port), POLLIN, 0});
    if (!o.canary6.empty()) fds.push_back({open_udp(o.canary6, port), POLLIN, 0});
  }
  // The ready line names this log (a random nonce): a reader that finds another log at the
  // same address sees it by the first line (deploy/witness_wire.h).
  const std::string ready = "W1 " + std::to_string(unix_ms()) + " ready - - 0 " + random_hex() + " -\n";
  (void)!::write(log.fd, ready.data(), ready.size());
  const auto until = Clock::now() + std::chrono::seconds(o.max_seconds);
  auto next_beat = Clock::now() + std::chrono::milliseconds(kHeartbeatMs);
  while (Clock::now() < until) {
    if (Clock::now() >= next_beat) {
      // Whatever reached the sockets before the heartbeat is logged above it (bounded: a
      // flood past the bound is logged after it, and its source soon runs out of its share).
      for (int round = 0; round < 16 && serve_ready(log, o, fds, 0); ++round) {
      }
      write_line(log, "heartbeat", "-", "-", 0, "", "");
      next_beat = Clock::now() + std::chrono::milliseconds(kHeartbeatMs);
    }
    serve_ready(log, o, fds, static_cast<int>(kHeartbeatMs));
  }
  return 0;
}

}  // namespace isoharness::world_helper
