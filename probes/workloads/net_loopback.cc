// Network family: a TCP round trip over the loopback interface (127.0.0.1, ephemeral
// port, Nagle off on both ends) to an echo thread. Nothing leaves the sandbox.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "workloads/echo_peer.h"
#include "workloads/registry.h"

namespace isoprobe::workloads {

namespace {

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void run_tcp_rtt_loopback(benchmark::State& state, const Env&) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;  // the kernel picks a free port
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (listener.get() < 0) return fail_with_errno(state, "socket(AF_INET)");
  socklen_t len = sizeof addr;
  if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener.get(), 1) != 0 ||
      ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return fail_with_errno(state, "bind/listen 127.0.0.1:0");
  }
  UniqueFd client_guard(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (client_guard.get() < 0) return fail_with_errno(state, "socket(AF_INET)");
  if (::connect(client_guard.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return fail_with_errno(state, "connect 127.0.0.1:" + std::to_string(ntohs(addr.sin_port)));
  }
  int server_fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
  if (server_fd < 0) return fail_with_errno(state, "accept");
  set_nodelay(server_fd);
  set_nodelay(client_guard.get());
  EchoPeer peer(server_fd, server_fd);
  UniqueFd client(client_guard.release());  // destroyed first: the peer sees end of input
  time_round_trips(state, client.get(), client.get(), 't', "tcp round trip");
}

}  // namespace

const Workload kTcpRttLoopback{
    .name = "tcp_rtt_loopback",
    .family = "net_loopback",
    .description = "64 bytes over TCP on 127.0.0.1 (TCP_NODELAY) to an echo thread and back",
    .run = run_tcp_rtt_loopback,
};

}  // namespace isoprobe::workloads
