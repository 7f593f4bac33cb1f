#include "probes/core/listener.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace isoprobe {

std::string serve_banner(const std::string& name) {
  return "isoprobe-serve " + name + "\n";
}

bool valid_serve_name(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

int run_serve(const ServeOptions& options) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    std::fprintf(stderr, "isoprobe serve: socket: %s\n", std::strerror(errno));
    return 3;
  }
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(options.port);
  sa.sin_addr.s_addr = htonl(INADDR_ANY);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 16) != 0) {
    std::fprintf(stderr, "isoprobe serve: cannot listen on port %u: %s\n", options.port,
                 std::strerror(errno));
    ::close(fd);
    return 3;
  }
  std::fprintf(stderr, "isoprobe serve: %s listening on port %u for at most %ld s\n", options.name.c_str(),
               options.port, options.max_seconds);
  const std::string banner = serve_banner(options.name);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(options.max_seconds);
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 500) <= 0) continue;
    int conn = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (conn < 0) continue;
    // One non-blocking write of a few bytes into a fresh socket's buffer: never stalls.
    (void)!::send(conn, banner.data(), banner.size(), MSG_NOSIGNAL);
    ::close(conn);
  }
  ::close(fd);
  return 0;
}

}  // namespace isoprobe
