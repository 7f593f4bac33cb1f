// `isoharness-world-helper serve-witness-log`: the local world's witness log over HTTP, as
// an operator-run witness on a deployment would serve its own (docs/CONTRACTS.md §4.4), so
// the hawk backend's reader is tested against a real server through the stand-in platform.
// It runs in the jumphost's namespace on the host link (the harness's side only: the
// sandboxes' packets never reach that address), answers GET of one fixed path, optionally
// with "?from=<byte offset>", with the file's lines from that offset in the authenticated
// wire format (harness/deploy/witness_wire.h: the log's identity from its first line, each
// line with its offset and an HMAC keyed with the token in --key-file), at most
// --max-bytes per answer, and anything else with 404. One connection at a time, each
// bounded: 2 KiB of request head within 2 s, the answer sent within 30 s; the process
// exits after --max-seconds whatever happens.
#include "harness/deploy/local/tools/witness_log_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "harness/deploy/witness_wire.h"

namespace isoharness::world_helper {
namespace {

using LogClock = std::chrono::steady_clock;

[[noreturn]] void log_server_die(const std::string& message) {
  std::fprintf(stderr, "isoharness-world-helper serve-witness-log: %s\n", message.c_str());
  std::exit(2);
}

struct LogServerOptions {
  std::string address;
  int port = 0;
  std::string file;
  std::string path = "/witness.log";
  long max_seconds = 86400;
  std::string key;                  // the token, from --key-file
  std::size_t max_bytes = 8 << 20;  // of one answer
};

// The token in a file, without its trailing newline; dies when shorter than 16 bytes.
std::string read_key(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  std::string key = text.str().substr(0, 4096);
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
  if (key.size() < 16) log_server_die("--key-file " + file + " holds no token of at least 16 bytes");
  return key;
}

LogServerOptions log_server_options(const std::vector<std::string>& args) {
  LogServerOptions o;
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    const std::string& v = args[i + 1];
    if (args[i] == "--listen") {
      const auto colon = v.rfind(':');
      if (colon == std::string::npos) log_server_die("--listen ADDR:PORT");
      o.address = v.substr(0, colon);
      o.port = std::atoi(v.c_str() + colon + 1);
    } else if (args[i] == "--file") {
      o.file = v;
    } else if (args[i] == "--path") {
      o.path = v;
    } else if (args[i] == "--key-file") {
      o.key = read_key(v);
    } else if (args[i] == "--max-bytes") {
      o.max_bytes = static_cast<std::size_t>(std::atol(v.c_str()));
    } else if (args[i] == "--max-seconds") {
      o.max_seconds = std::atol(v.c_str());
    } else if (args[i] != "--tag") {
      log_server_die("unknown option " + args[i]);
    }
  }
  if (o.address.empty() || o.port < 1 || o.port > 65535 || o.file.empty() || o.max_seconds < 1 ||
      o.key.empty() || o.max_bytes < 4096)
    log_server_die(
        "needs --listen ADDR:PORT --file FILE --key-file KEY (--path /P, --max-seconds N, --max-bytes N)");
  return o;
}

int listen_on(const LogServerOptions& o) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(o.port));
  if (fd < 0 || ::inet_pton(AF_INET, o.address.c_str(), &a.sin_addr) != 1 ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 8) != 0)
    log_server_die("cannot listen on " + o.address + ":" + std::to_string(o.port) + ": " +
                   std::strerror(errno));
  return fd;
}

// The request head, at most 2 KiB within 2 s; "" when it does not end in time.
std::string read_head(int fd) {
  std::string head;
  const auto until = LogClock::now() + std::chrono::seconds(2);
  char buf[512];
  while (head.size() < 2048 && head.find("\r\n\r\n") == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - LogClock::now()).count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return "";
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return "";
    head.append(buf, static_cast<std::size_t>(n));
  }
  return head.find("\r\n\r\n") == std::string::npos ? "" : head;
}

bool send_all_until(int fd, const char* data, std::size_t size, LogClock::time_point until) {
  while (size > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - LogClock::now()).count();
    pollfd p{fd, POLLOUT, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// The offset a request head asks from: "GET <path> HTTP/1." is 0, "GET <path>?from=N
// HTTP/1." is N; -1 for any other request.
long long requested_offset(const std::string& head, const std::string& path) {
  const std::string get = "GET " + path;
  if (head.rfind(get, 0) != 0) return -1;
  std::string_view rest = std::string_view(head).substr(get.size());
  long long from = 0;
  if (rest.rfind("?from=", 0) == 0) {
    rest.remove_prefix(6);
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), from);
    if (ec != std::errc() || from < 0) return -1;
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
  }
  return rest.rfind(" HTTP/1.", 0) == 0 ? from : -1;
}

// What one answer is made of: the file's identity (from its first bytes), its size, and
// its bytes from the offset asked, at most the answer's bound of them.
struct LogSlice {
  std::string id;
  long long size = 0;
  std::string bytes;
};

// At most `max` bytes of the open file from `at`; false on a read error.
bool pread_bounded(int f, long long at, std::size_t max, std::string& out) {
  out.assign(max, '\0');
  const ssize_t n = max == 0 ? 0 : ::pread(f, out.data(), out.size(), at);
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return n >= 0;
}

bool read_from(const std::string& file, long long from, std::size_t max, LogSlice& slice) {
  const int f = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (f < 0 || ::fstat(f, &st) != 0) {
    if (f >= 0) ::close(f);
    return false;
  }
  slice.size = st.st_size;
  std::string head;
  const std::size_t want =
      from < slice.size ? std::min<std::size_t>(max, static_cast<std::size_t>(slice.size - from)) : 0;
  const bool ok = pread_bounded(f, 0, isoharness::deploy::kWitnessLogIdBytes, head) &&
                  pread_bounded(f, from, want, slice.bytes);
  ::close(f);
  slice.id = isoharness::deploy::witness_log_id(head);
  return ok;
}

void answer(int fd, const LogServerOptions& o) {
  const std::string head = read_head(fd);
  const auto until = LogClock::now() + std::chrono::seconds(30);
  const long long from = requested_offset(head, o.path);
  LogSlice slice;
  if (from < 0 || !read_from(o.file, from, o.max_bytes, slice)) {
    const std::string no = "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    send_all_until(fd, no.data(), no.size(), until);
    return;
  }
  const std::string body =
      isoharness::deploy::frame_witness_log(o.key, slice.id, slice.bytes, from, slice.size, o.max_bytes);
  const std::string ok = "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n";
  if (send_all_until(fd, ok.data(), ok.size(), until)) send_all_until(fd, body.data(), body.size(), until);
}

}  // namespace

int cmd_serve_witness_log(const std::vector<std::string>& args) {
  const LogServerOptions o = log_server_options(args);
  ::signal(SIGPIPE, SIG_IGN);
  ::alarm(static_cast<unsigned>(o.max_seconds));  // SIGALRM ends us, whatever happens
  const int server = listen_on(o);
  for (;;) {
    const int c = ::accept4(server, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      log_server_die(std::string("accept: ") + std::strerror(errno));
    }
    answer(c, o);
    ::shutdown(c, SHUT_WR);
    ::close(c);
  }
}

}  // namespace isoharness::world_helper
