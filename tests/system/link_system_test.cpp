// The local world's far jumphost link (the profile's jumphost_link.rtt_ms): the world's
// delay relay (isoharness-world-helper relay) in the jumphost namespace, measured against
// the same jumphost sshd reached directly on port 22, in one world, on one sandbox. What is
// checked is the round trip each path shows, never a speed target.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>

#include "harness/deploy/local/local_backend.h"
#include "harness/deploy/local/sandbox_spec.h"
#include "harness/deploy/local/world.h"
#include "harness/transport/transport.h"
#include "tests/support/test_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
using namespace std::chrono_literals;
namespace dl = isoharness::deploy::local;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kRttMs = 40;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Milliseconds from the start of a TCP connect to addr:port until the first line of the
// server's greeting has arrived (bounded: 5 s, 256 bytes); a negative number when none came.
double greeting_ms(const std::string& addr, int port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) != 1) return -1;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const auto t = Clock::now();
  double took = -1;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
    pollfd p{fd, POLLIN, 0};
    char buf[256];
    if (::poll(&p, 1, 5000) == 1 && ::read(fd, buf, sizeof buf) > 0) took = ms_since(t);
  }
  ::close(fd);
  return took;
}

// Every process whose command line names both words (the relay of one run).
int processes_naming(const std::string& a, const std::string& b) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (cmd.find(a) != std::string::npos && cmd.find(b) != std::string::npos) ++n;
  }
  return n;
}

struct Timed {
  double connect_ms = 0;
  double best_exec_ms = 1e9;  // open a session on the sandbox and run `true`: the fastest of 3
};

// Connects to the jumphost at `jump`, then three times opens a session on the sandbox and
// runs `true` through it.
Timed time_path(const transport::SshEndpoint& jump, const transport::SshEndpoint& sandbox,
                const transport::Credentials& creds) {
  Timed t;
  auto start = Clock::now();
  auto conn = transport::JumpConnection::connect(jump, creds, {}, 20s);
  REQUIRE(conn.has_value());
  t.connect_ms = ms_since(start);
  for (int i = 0; i < 3; ++i) {
    start = Clock::now();
    auto s = (*conn)->open(sandbox, 20s);
    REQUIRE(s.has_value());
    auto r = (*s)->exec({"true"}, 20s, 4096);
    REQUIRE(r.has_value());
    CHECK(r->exit_code == 0);
    t.best_exec_ms = std::min(t.best_exec_ms, ms_since(start));
  }
  return t;
}

}  // namespace

TEST_CASE("jumphost_link.rtt_ms: the link relay adds its round trip, and goes with the world",
          "[system][link]") {
  test::require_system({"runc", "sshd", "ssh-keygen", "nft", "dnsmasq", "ip"});
  test::local::ScratchDir dir;
  const std::string key = test::local::make_login_key(dir.path);
  json profile = dl::default_local_profile();
  profile["jumphost_link"] = {{"rtt_ms", kRttMs}};
  dl::LocalOptions opts;
  opts.run_id = "t" + dl::new_run_id().substr(0, 7);
  auto backend = dl::make_local_backend(profile, opts);

  deploy::SandboxRequest req;
  req.run_id = backend->run_id();
  req.name = "far";
  req.item_id = "test/far";
  req.values =
      json::parse(test::read_text(test::source_dir() + "/tests/fixtures/local/values_standard_runc.json"));
  req.node_class = "tier";
  req.authorized_key = key;
  const auto handle = backend->deploy(req);
  const transport::SshEndpoint relayed = handle.route.jump;
  CHECK(relayed.port == dl::World::kRelayPort);
  transport::SshEndpoint direct = relayed;
  direct.port = 22;  // the same sshd, not through the relay
  CHECK(processes_naming("relay", "ih-" + opts.run_id) == 1);

  // One round trip of the relay on its own: connect, then the sshd's greeting.
  const double greet_direct = greeting_ms(direct.host, direct.port);
  const double greet_relayed = greeting_ms(relayed.host, relayed.port);
  INFO("greeting: direct " << greet_direct << " ms, through the relay " << greet_relayed << " ms");
  REQUIRE(greet_direct >= 0);
  REQUIRE(greet_relayed >= 0);
  CHECK(greet_relayed >= kRttMs);

  transport::Credentials creds;
  creds.private_key_path = dir.path + "/id_ed25519";
  const Timed d = time_path(direct, handle.route.sandbox, creds);
  const Timed r = time_path(relayed, handle.route.sandbox, creds);
  INFO("connect: direct " << d.connect_ms << " ms, relayed " << r.connect_ms << " ms; session+exec: direct "
                          << d.best_exec_ms << " ms, relayed " << r.best_exec_ms << " ms");
  // SSH's connect is several round trips (banner, key exchange, new keys, authentication),
  // a session on the sandbox and one command at least two (channel open, exec request).
  CHECK(r.connect_ms - d.connect_ms >= 3 * kRttMs);
  CHECK(r.best_exec_ms - d.best_exec_ms >= 2 * kRttMs);
  WARN("rtt " << kRttMs << " ms: greeting " << greet_direct << " -> " << greet_relayed << " ms, connect "
              << d.connect_ms << " -> " << r.connect_ms << " ms, session+exec " << d.best_exec_ms << " -> "
              << r.best_exec_ms << " ms");

  backend->destroy(handle);
  backend.reset();
  CHECK(processes_naming("relay", "ih-" + opts.run_id) == 0);
  CHECK(test::local::leftovers_of("/run/isoharness", opts.run_id).empty());
}

namespace {

// Whether a TCP handshake with addr:port completes within `limit`. A handshake whose SYN or
// SYN-ACK is dropped waits for TCP's first retransmission (1 s), so it misses a 500 ms limit.
bool handshake_within(const std::string& addr, int port, int limit_ms) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) != 1) return false;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  bool done = ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
  if (!done && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    done =
        ::poll(&p, 1, limit_ms) == 1 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
  }
  ::close(fd);
  return done;
}

}  // namespace

// The loss itself, measured: of 100 handshakes with the jumphost's sshd (each a SYN in and a
// SYN-ACK out across the shaped link), about 1 - 0.95^2 = 9.75 % lose a packet and miss a
// 500 ms limit. On a link without the loss (or with its rule gone) none does: at least 2 of
// 100 is then the check that the loss is there (P(<= 1) at 9.75 % is 3e-4), at most 30 that
// it is not far above what was asked.
TEST_CASE("jumphost_link.loss_percent: about that share of the link's packets is dropped", "[system][link]") {
  test::require_system({"runc", "sshd", "ssh-keygen", "nft", "dnsmasq", "ip"});
  json profile = dl::default_local_profile();
  profile["jumphost_link"] = {{"loss_percent", 5}};
  dl::LocalOptions opts;
  opts.run_id = "t" + dl::new_run_id().substr(0, 7);
  auto backend = dl::make_local_backend(profile, opts);
  const std::string jump = backend->context()["jumphost"].get<std::string>();
  int missed = 0;
  for (int i = 0; i < 100; ++i) missed += handshake_within(jump, 22, 500) ? 0 : 1;
  WARN("jumphost link at 5 % loss: " << missed << " of 100 handshakes missed 500 ms");
  CHECK(missed >= 2);
  CHECK(missed <= 30);
  backend.reset();
  CHECK(test::local::leftovers_of("/run/isoharness", opts.run_id).empty());
}
