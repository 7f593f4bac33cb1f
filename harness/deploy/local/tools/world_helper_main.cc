// isoharness-world-helper: the small programs the local backend runs inside its own
// network namespaces, so that the world needs no package beyond the project itself.
//
//   serve  --tag T --max-seconds N --listen NAME=ADDR:PORT/PROTO ...
//       Answers every listener from one poll loop. PROTO "http" reads the request head
//       (at most 1 KiB, at most 1 s) and answers one HTTP/1.0 line naming the listener;
//       "tcp" writes one line naming the listener and closes. Each connection is served
//       to completion before the next (bounded: 1 KiB in, one line out, 1 s), and the
//       process exits after --max-seconds whatever happens.
//   noise  --tag T --cpus LIST --duty-percent P --max-seconds N
//       A bounded noisy neighbour: pinned to LIST, busy P% of every 10 ms period.
//   wait-banner --addr A --port P --deadline-ms N [--attempt-ms N] [--device IFACE] [--prefix P]
//       Connects until the peer sends a line starting "SSH-" (or --prefix; or the deadline passes);
//       prints that line. Exit 0 when seen, 1 otherwise. --device binds the socket to
//       one interface (SO_BINDTODEVICE), so a test can try a path without any packet
//       leaving through another interface.
//   adopt --tag T --max-seconds N -- PROGRAM ARGS...
//       Runs PROGRAM (`runc run --detach`, `runsc run --detach`) with its stdout and stderr
//       on ours' stderr, as a child subreaper: what PROGRAM leaves running (the container's
//       init, runsc's sandbox and gofer) becomes our child when PROGRAM exits. Writes
//       "exit N" or "signal N" on stdout when PROGRAM ends and closes stdout; then reaps
//       every adopted process the moment it ends, and exits once none is left (or after
//       --max-seconds). Without it they go to PID 1, and `runc delete` and `runsc delete`
//       wait, polling, until PID 1 reaps them: 1.3 to 2 s per container on a machine
//       whose init reaps slowly.
//
//   witness --tag T --max-seconds N --log FILE --zone Z --zone-address A --canary C ...
//       The world's outside witness (tools/witness.cc): logs every TCP SYN, UDP datagram
//       and ICMP echo that enters the world, and every DNS query for the canary zone.
//   serve-witness-log --tag T --max-seconds N --listen ADDR:PORT --file FILE [--path /P]
//       The witness log over HTTP (tools/witness_log_server.cc), from the jumphost's
//       namespace on the host link: what an operator-run witness serves on a deployment.
//   relay --tag T --max-seconds N --listen ADDR:PORT --to ADDR:PORT --delay-us D
//         [--max-connections N] [--buffer-bytes B]
//       A TCP forwarder holding every byte D microseconds in each direction (tools/relay.cc): the
//       world's far jumphost link (jumphost_link.rtt_ms, D = rtt * 500).
//   name-proxy --tag T --max-seconds N --listen ADDR:PORT --rules DIR [--max-connections N]
//       The node's name-checking proxy for allow-listed names (tools/name_proxy.cc): a
//       sandbox's TCP 80/443 to a listed address goes out only when its TLS server name or
//       HTTP Host is on that sandbox's list (DIR/<sandbox address>); otherwise it is reset.
//
// --tag carries the run id so a cleanup can recognise its own processes.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "harness/deploy/local/tools/name_proxy.h"
#include "harness/deploy/local/tools/relay.h"
#include "harness/deploy/local/tools/witness.h"
#include "harness/deploy/local/tools/witness_log_server.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Listener {
  std::string name;
  std::string proto;
  int fd = -1;
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "isoharness-world-helper: %s\n", what.c_str());
  std::exit(2);
}

long parse_long(const std::string& text, const char* what) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 0) die(std::string("bad ") + what + ": " + text);
  return v;
}

bool parse_ipv4(const std::string& addr, int port, sockaddr_in& out) {
  std::memset(&out, 0, sizeof out);
  out.sin_family = AF_INET;
  out.sin_port = htons(static_cast<uint16_t>(port));
  return port > 0 && port < 65536 && inet_pton(AF_INET, addr.c_str(), &out.sin_addr) == 1;
}

// NAME=ADDR:PORT/PROTO
Listener open_listener(const std::string& spec) {
  auto eq = spec.find('=');
  auto colon = spec.rfind(':');
  auto slash = spec.rfind('/');
  if (eq == std::string::npos || colon == std::string::npos || slash == std::string::npos || colon < eq ||
      slash < colon)
    die("bad --listen " + spec + " (want NAME=ADDR:PORT/PROTO)");
  Listener l;
  l.name = spec.substr(0, eq);
  std::string addr = spec.substr(eq + 1, colon - eq - 1);
  int port = static_cast<int>(parse_long(spec.substr(colon + 1, slash - colon - 1), "port"));
  l.proto = spec.substr(slash + 1);
  if (l.proto != "http" && l.proto != "tcp") die("bad protocol in --listen " + spec);
  sockaddr_storage ss{};
  socklen_t len = sizeof(sockaddr_in);
  if (addr.size() > 2 && addr.front() == '[' && addr.back() == ']') {  // [IPv6]
    auto* sa6 = reinterpret_cast<sockaddr_in6*>(&ss);
    sa6->sin6_family = AF_INET6;
    sa6->sin6_port = htons(static_cast<uint16_t>(port));
    len = sizeof(sockaddr_in6);
    if (port <= 0 || port >= 65536 ||
        inet_pton(AF_INET6, addr.substr(1, addr.size() - 2).c_str(), &sa6->sin6_addr) != 1)
      die("bad address in --listen " + spec);
  } else if (!parse_ipv4(addr, port, *reinterpret_cast<sockaddr_in*>(&ss))) {
    die("bad address in --listen " + spec);
  }
  l.fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int one = 1;
  ::setsockopt(l.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (l.fd < 0 || ::bind(l.fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || ::listen(l.fd, 64) != 0)
    die("cannot listen on " + addr + ":" + std::to_string(port) + ": " + std::strerror(errno));
  return l;
}

void serve_one(const Listener& l, int conn) {
  if (l.proto == "http") {
    char buf[1024];
    std::size_t got = 0;
    const auto until = Clock::now() + std::chrono::seconds(1);
    while (got < sizeof buf && Clock::now() < until) {
      pollfd p{conn, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      ssize_t n = ::read(conn, buf + got, sizeof buf - got);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
      if (std::string(buf, got).find("\r\n\r\n") != std::string::npos) break;
    }
    std::string body = "isoharness world: " + l.name + "\n";
    std::string reply =
        "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\nConnection: close\r\n\r\n" + body;
    (void)!::write(conn, reply.data(), reply.size());
  } else {
    std::string line = "isoharness world: " + l.name + "\n";
    (void)!::write(conn, line.data(), line.size());
  }
  ::close(conn);
}

int cmd_serve(const std::vector<std::string>& args) {
  std::vector<Listener> listeners;
  long max_seconds = 3600;
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i] == "--listen")
      listeners.push_back(open_listener(args[i + 1]));
    else if (args[i] == "--max-seconds")
      max_seconds = parse_long(args[i + 1], "--max-seconds");
    else if (args[i] != "--tag")
      die("unknown option " + args[i]);
  }
  if (listeners.empty()) die("serve: no --listen");
  const auto until = Clock::now() + std::chrono::seconds(max_seconds);
  while (Clock::now() < until) {
    std::vector<pollfd> fds;
    fds.reserve(listeners.size());
    for (const auto& l : listeners) fds.push_back({l.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 1000) <= 0) continue;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & POLLIN)) continue;
      int conn = ::accept4(listeners[i].fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn >= 0) serve_one(listeners[i], conn);
    }
  }
  return 0;
}

// "0-1" or "1" or "0,2" -> CPU numbers.
std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto comma = text.find(',', pos);
    std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    auto dash = part.find('-');
    long lo = parse_long(part.substr(0, dash), "cpu");
    long hi = dash == std::string::npos ? lo : parse_long(part.substr(dash + 1), "cpu");
    if (hi < lo || hi > 1023) die("bad cpu list " + text);
    for (long c = lo; c <= hi; ++c) cpus.push_back(static_cast<int>(c));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (cpus.empty()) die("empty cpu list");
  return cpus;
}

int cmd_noise(const std::vector<std::string>& args) {
  std::string cpus = "0";
  long duty = 50, max_seconds = 3600;
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i] == "--cpus")
      cpus = args[i + 1];
    else if (args[i] == "--duty-percent")
      duty = parse_long(args[i + 1], "--duty-percent");
    else if (args[i] == "--max-seconds")
      max_seconds = parse_long(args[i + 1], "--max-seconds");
    else if (args[i] != "--tag")
      die("unknown option " + args[i]);
  }
  if (duty > 100) die("--duty-percent above 100");
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : parse_cpu_list(cpus)) CPU_SET(c, &set);
  if (::sched_setaffinity(0, sizeof set, &set) != 0)
    die(std::string("sched_setaffinity: ") + std::strerror(errno));
  const auto until = Clock::now() + std::chrono::seconds(max_seconds);
  const auto period = std::chrono::milliseconds(10);
  volatile unsigned long sink = 0;
  while (Clock::now() < until) {
    const auto start = Clock::now();
    while (Clock::now() - start < period * duty / 100) sink = sink + 1;
    std::this_thread::sleep_until(start + period);
  }
  return 0;
}

// One connection to sa: the first line it sends before `until`, or "" with last_error set.
// One connection: the SYN gets until connect_until (a lost one is retried by a fresh
// connection), an established connection gets until read_until for its banner (a loaded
// sshd, e.g. under gVisor, may take seconds to send it; dropping the connection early would
// only make it start over).
std::string read_banner_once(const sockaddr_in& sa, const std::string& device,
                             Clock::time_point connect_until, Clock::time_point read_until,
                             std::string& last_error) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) die(std::string("socket: ") + std::strerror(errno));
  if (!device.empty() && ::setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, device.c_str(),
                                      static_cast<socklen_t>(device.size())) != 0)
    die("SO_BINDTODEVICE " + device + ": " + std::strerror(errno));
  int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa);
  std::string line;
  if (rc != 0 && errno != EINPROGRESS) last_error = std::strerror(errno);
  bool done = rc != 0 && errno != EINPROGRESS;
  bool connected = rc == 0;
  while (!done && Clock::now() < (connected ? read_until : connect_until) && line.size() < 256) {
    pollfd p{fd, static_cast<short>(connected ? POLLIN : POLLIN | POLLOUT), 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    if (!connected) {
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        last_error = std::strerror(err);
        break;
      }
      connected = true;
    }
    if ((p.revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    char c;
    ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) last_error = n == 0 ? "closed before a banner" : std::strerror(errno);
    done = n <= 0 || c == '\n';
    if (n > 0 && c != '\n') line += c;
  }
  if (!done && line.empty())
    last_error = connected ? "connected, but no banner before the deadline"
                           : "no answer within one attempt (a lost SYN or SYN-ACK?)";
  ::close(fd);
  return line;
}

// Waits for a line starting with prefix from addr:port. Each attempt is a fresh connection
// given at most --attempt-ms: on a lossy link a dropped SYN would otherwise leave the one
// connection to TCP's exponential SYN backoff (retries 1, 3, 7, 15 s after the first), so
// three or four drops in a row would use up the whole deadline; a new connection per
// attempt sends a new SYN every attempt-ms instead. An established connection waits at most
// --banner-ms for its banner (a loaded sshd may take seconds) and is then replaced by a
// fresh one, so one connection stuck on a lossy link cannot hold the wait to its deadline;
// the last connection that fits gets whatever time is left.
int cmd_wait_banner(const std::vector<std::string>& args) {
  std::string addr, device, prefix = "SSH-";
  int port = 22;
  long deadline_ms = 10000, attempt_ms = 1000, banner_ms = 5000;
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i] == "--addr")
      addr = args[i + 1];
    else if (args[i] == "--port")
      port = static_cast<int>(parse_long(args[i + 1], "--port"));
    else if (args[i] == "--deadline-ms")
      deadline_ms = parse_long(args[i + 1], "--deadline-ms");
    else if (args[i] == "--attempt-ms")
      attempt_ms = std::max(50L, parse_long(args[i + 1], "--attempt-ms"));
    else if (args[i] == "--banner-ms")
      banner_ms = std::max(100L, parse_long(args[i + 1], "--banner-ms"));
    else if (args[i] == "--device")
      device = args[i + 1];
    else if (args[i] == "--prefix")
      prefix = args[i + 1];
    else
      die("unknown option " + args[i]);
  }
  sockaddr_in sa;
  if (!parse_ipv4(addr, port, sa)) die("bad --addr/--port");
  const auto until = Clock::now() + std::chrono::milliseconds(deadline_ms);
  std::string last_error = "deadline passed before the first attempt";
  int attempts = 0;
  for (; attempts < 100000 && Clock::now() < until; ++attempts) {
    const auto now = Clock::now();
    const auto attempt_until = std::min(until, now + std::chrono::milliseconds(attempt_ms));
    const auto banner_until = until - now < std::chrono::milliseconds(2 * banner_ms)
                                  ? until
                                  : now + std::chrono::milliseconds(banner_ms);
    const std::string line = read_banner_once(sa, device, attempt_until, banner_until, last_error);
    if (!prefix.empty() && line.rfind(prefix, 0) == 0) {
      std::printf("%s\n", line.c_str());
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::fprintf(stderr, "no banner starting %s from %s:%d within %ld ms, %d connections (last: %s)\n",
               prefix.c_str(), addr.c_str(), port, deadline_ms, attempts, last_error.c_str());
  return 1;
}

// "exit N" / "signal N" for a wait status.
std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "unknown";
}

int cmd_adopt(const std::vector<std::string>& options, const std::vector<std::string>& program) {
  long max_seconds = 3600;
  for (std::size_t i = 0; i + 1 < options.size(); i += 2) {
    if (options[i] == "--max-seconds")
      max_seconds = parse_long(options[i + 1], "--max-seconds");
    else if (options[i] != "--tag")
      die("unknown option " + options[i]);
  }
  if (program.empty()) die("adopt: no program after --");
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
    die(std::string("PR_SET_CHILD_SUBREAPER: ") + std::strerror(errno));
  ::alarm(static_cast<unsigned>(std::max(1L, max_seconds)));  // SIGALRM ends us, whatever happens
  std::vector<char*> child_argv;
  child_argv.reserve(program.size() + 1);
  for (const auto& w : program) child_argv.push_back(const_cast<char*>(w.c_str()));
  child_argv.push_back(nullptr);
  const pid_t child = ::fork();
  if (child < 0) die(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    ::dup2(2, 1);  // what stays running inherits this stdio: the log, never the harness's pipe
    ::alarm(0);
    ::execvp(child_argv[0], child_argv.data());
    std::fprintf(stderr, "isoharness-world-helper: cannot start %s: %s\n", child_argv[0],
                 std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) die(std::string("waitpid: ") + std::strerror(errno));
  }
  const std::string line = describe_status(status) + "\n";
  (void)!::write(1, line.data(), line.size());
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null >= 0) ::dup2(null, 1);  // the harness reads to end of file
  for (;;) {
    if (::waitpid(-1, &status, 0) < 0 && errno == ECHILD) return 0;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2)
    die("usage: isoharness-world-helper "
        "serve|noise|wait-banner|adopt|witness|serve-witness-log|relay|name-proxy "
        "[options]");
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (cmd == "adopt") {
    const auto dash = std::find(args.begin(), args.end(), "--");
    return cmd_adopt(
        std::vector<std::string>(args.begin(), dash),
        dash == args.end() ? std::vector<std::string>{} : std::vector<std::string>(dash + 1, args.end()));
  }
  if (args.size() % 2 != 0) die("options come in pairs: --name value");
  if (cmd == "serve") return cmd_serve(args);
  if (cmd == "noise") return cmd_noise(args);
  if (cmd == "wait-banner") return cmd_wait_banner(args);
  if (cmd == "witness") return isoharness::world_helper::cmd_witness(args);
  if (cmd == "serve-witness-log") return isoharness::world_helper::cmd_serve_witness_log(args);
  if (cmd == "relay") return isoharness::world_helper::cmd_relay(args);
  if (cmd == "name-proxy") return isoharness::world_helper::cmd_name_proxy(args);
  die("unknown subcommand " + cmd);
}
