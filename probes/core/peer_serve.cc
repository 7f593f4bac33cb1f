// peer-serve and peer-record (peer_serve.h). The server is a forked child in its own session
// with /dev/null for stdio, so the SSH channel that started it closes at once; the parent
// binds and listens first and reports only then, so "listening" is true when it returns.
#include "probes/core/peer_serve.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include "probes/core/addresses.h"
#include "probes/core/file_read.h"

namespace isoprobe {
namespace {

constexpr std::size_t kMaxLine = 96;
constexpr int kMaxPending = 16;
constexpr std::size_t kMaxRecordBytes = std::size_t{256} * 1024;

struct Pending {
  int fd = -1;
  std::size_t index = 0;  // into the record's connections
  std::string bytes;
  std::int64_t until_ms = 0;
};

std::string address_text(const sockaddr_storage& ss) {
  char text[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr, text, sizeof text);
    return text;
  }
  const auto& a6 = reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr;
  if (IN6_IS_ADDR_V4MAPPED(&a6)) {  // an IPv4 peer on the dual-stack socket
    ::inet_ntop(AF_INET, a6.s6_addr + 12, text, sizeof text);
    return text;
  }
  ::inet_ntop(AF_INET6, &a6, text, sizeof text);
  return text;
}

// A dual-stack listener on [::]:port; where the sandbox has no IPv6, 0.0.0.0:port.
int listen_on(std::uint16_t port, std::vector<std::string>& families) {
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd >= 0) {
    int zero = 0, one = 1;
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(port);
    sa.sin6_addr = in6addr_any;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 && ::listen(fd, 32) == 0) {
      families = {"ipv4", "ipv6"};
      return fd;
    }
    ::close(fd);
  }
  fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_ANY);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 32) != 0) {
    ::close(fd);
    return -1;
  }
  families = {"ipv4"};
  return fd;
}

// Writes the record beside its path and renames it into place: a reader never sees half.
void write_record(const std::string& path, const PeerServeRecord& r) {
  const std::string tmp = path + ".part";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return;
    out << to_json(r).dump() << '\n';
  }
  ::rename(tmp.c_str(), path.c_str());
}

void accept_one(int listener, PeerServeRecord& r, std::vector<Pending>& pending, int max_connections) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  int fd = ::accept4(listener, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) return;
  if (static_cast<int>(r.connections.size()) >= max_connections ||
      static_cast<int>(pending.size()) >= kMaxPending) {
    ++r.more_connections;
    ::close(fd);
    return;
  }
  r.connections.push_back({address_text(ss), unix_ms_now(), ""});
  pending.push_back({fd, r.connections.size() - 1, "", unix_ms_now() + 1000});
}

// Reads what a pending connection sent; true when it is done with (line, cut, closed, late).
bool read_pending(Pending& p, PeerServeRecord& r) {
  char buf[kMaxLine];
  ssize_t n = ::recv(p.fd, buf, kMaxLine - p.bytes.size(), 0);
  if (n > 0) p.bytes.append(buf, static_cast<std::size_t>(n));
  const bool done = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) ||
                    p.bytes.find('\n') != std::string::npos || p.bytes.size() >= kMaxLine ||
                    unix_ms_now() >= p.until_ms;
  if (!done) return false;
  if (auto nonce = parse_peer_line(p.bytes)) r.connections[p.index].nonce = *nonce;
  ::close(p.fd);
  return true;
}

void serve_loop(int listener, PeerServeRecord& r, const PeerServeOptions& o) {
  std::vector<Pending> pending;
  while (unix_ms_now() < r.until_unix_ms) {
    std::vector<pollfd> fds{{listener, POLLIN, 0}};
    for (const auto& p : pending) fds.push_back({p.fd, POLLIN, 0});
    ::poll(fds.data(), fds.size(), 200);
    r.alive_unix_ms = unix_ms_now();  // everything that arrived before now is handled below
    if (fds[0].revents & POLLIN)
      for (int i = 0; i < kMaxPending; ++i) accept_one(listener, r, pending, o.max_connections);
    for (std::size_t i = pending.size(); i-- > 0;)
      if (read_pending(pending[i], r)) pending.erase(pending.begin() + static_cast<long>(i));
    write_record(o.record, r);
  }
  for (auto& p : pending) ::close(p.fd);
  r.ended = true;
  write_record(o.record, r);
}

// The forked server: its own session, stdio on /dev/null, nothing of the parent's channel.
void become_server(int listener, PeerServeRecord& r, const PeerServeOptions& o) {
  ::setsid();
  int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd <= 2; ++fd)
    if (null >= 0) ::dup2(null, fd);
  serve_loop(listener, r, o);
  ::_exit(0);
}

}  // namespace

std::int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string peer_line(std::string_view nonce) {
  return "isoharness-peer " + std::string(nonce) + "\n";
}

std::optional<std::string> parse_peer_line(std::string_view bytes) {
  constexpr std::string_view kPrefix = "isoharness-peer ";
  if (bytes.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  bytes.remove_prefix(kPrefix.size());
  const auto end = bytes.find('\n');
  if (end == std::string_view::npos) return std::nullopt;
  std::string_view nonce = bytes.substr(0, end);
  if (!is_valid_nonce(nonce)) return std::nullopt;
  return std::string(nonce);
}

nlohmann::json to_json(const PeerServeRecord& r) {
  nlohmann::json conns = nlohmann::json::array();
  for (const auto& c : r.connections)
    conns.push_back({{"from", c.from}, {"at_unix_ms", c.at_unix_ms}, {"nonce", c.nonce}});
  return {{"schema", kPeerServeSchema},
          {"port", r.port},
          {"started_unix_ms", r.started_unix_ms},
          {"alive_unix_ms", r.alive_unix_ms},
          {"until_unix_ms", r.until_unix_ms},
          {"families", r.families},
          {"connections", conns},
          {"more_connections", r.more_connections},
          {"ended", r.ended}};
}

int start_peer_serve(const PeerServeOptions& o) {
  PeerServeRecord r;
  r.port = o.port;
  int listener = listen_on(o.port, r.families);
  if (listener < 0) {
    std::fprintf(stderr, "isoprobe peer-serve: cannot listen on port %u: %s\n", o.port, std::strerror(errno));
    return 3;
  }
  r.started_unix_ms = r.alive_unix_ms = unix_ms_now();
  r.until_unix_ms = r.started_unix_ms + o.window_ms;
  write_record(o.record, r);
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) {
    std::fprintf(stderr, "isoprobe peer-serve: fork: %s\n", std::strerror(errno));
    return 3;
  }
  if (child == 0) become_server(listener, r, o);
  ::close(listener);
  nlohmann::json ready = to_json(r);
  ready["listening"] = true;
  ready["pid"] = child;
  const OwnAddresses own = own_addresses();  // where peers may find it, from inside
  ready["ipv4"] = own.ipv4;
  ready["ipv6"] = own.ipv6;
  std::printf("%s\n", ready.dump().c_str());
  return 0;
}

int print_peer_record(const std::string& record, std::int64_t after, long wait_ms) {
  const std::int64_t give_up = unix_ms_now() + wait_ms;
  FileRead f = read_file_bounded(record, kMaxRecordBytes);
  while (true) {
    auto doc = nlohmann::json::parse(f.ok() ? f.data : std::string(), nullptr, false);
    const auto alive = doc.is_object() ? doc.find("alive_unix_ms") : doc.end();
    const auto ended = doc.is_object() ? doc.find("ended") : doc.end();
    const bool seen = alive != doc.end() && alive->is_number_integer() && alive->get<std::int64_t>() > after;
    const bool over = ended != doc.end() && ended->is_boolean() && ended->get<bool>();
    if (seen || over || unix_ms_now() >= give_up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    f = read_file_bounded(record, kMaxRecordBytes);
  }
  if (!f.ok()) {
    std::fprintf(stderr, "isoprobe peer-record: cannot read %s\n", record.c_str());
    return 3;
  }
  std::fwrite(f.data.data(), 1, f.data.size(), stdout);
  return 0;
}

}  // namespace isoprobe
