// `isoharness-world-helper serve-witness-log`: the local world's witness log over HTTP, as
// an operator-run witness on a deployment would serve its own (docs/CONTRACTS.md §4.4), so
// the hawk backend's reader is tested against a real server through the stand-in platform.
// It runs in the jumphost's namespace on the host link (the harness's side only: the
// sandboxes' packets never reach that address), answers GET of one fixed path with the
// file's current bytes and anything else with 404. One connection at a time, each bounded:
// 2 KiB of request head within 2 s, the file streamed for at most 30 s; the process exits
// after --max-seconds whatever happens.
#include "harness/deploy/local/tools/witness_log_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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
};

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
    } else if (args[i] == "--max-seconds") {
      o.max_seconds = std::atol(v.c_str());
    } else if (args[i] != "--tag") {
      log_server_die("unknown option " + args[i]);
    }
  }
  if (o.address.empty() || o.port < 1 || o.port > 65535 || o.file.empty() || o.max_seconds < 1)
    log_server_die("needs --listen ADDR:PORT --file FILE (--path /P, --max-seconds N)");
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

void answer(int fd, const LogServerOptions& o) {
  const std::string head = read_head(fd);
  const auto until = LogClock::now() + std::chrono::seconds(30);
  const std::string wanted = "GET " + o.path + " HTTP/1.";
  const int file = head.rfind(wanted, 0) == 0 ? ::open(o.file.c_str(), O_RDONLY | O_CLOEXEC) : -1;
  if (file < 0) {
    const std::string no = "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    send_all_until(fd, no.data(), no.size(), until);
    return;
  }
  const std::string ok = "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n";
  bool going = send_all_until(fd, ok.data(), ok.size(), until);
  char buf[64 * 1024];
  for (ssize_t n = 0; going && (n = ::read(file, buf, sizeof buf)) > 0;)
    going = send_all_until(fd, buf, static_cast<std::size_t>(n), until);
  ::close(file);
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
