// The operator's witness log read over SSH (log.ssh, docs/CONTRACTS.md §4.4.1) against a
// real OpenSSH sshd that serves SFTP only (tests/system/transport_world.h, jump_sftp): the
// transport's ranged read, then the hawk backend's witness view from a real log file, read
// incrementally, read anew when the file is replaced, and not judged on when the host key
// changed, the file is missing, or the server does not answer in time.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "harness/common/error.h"
#include "harness/deploy/hawk/hawk_backend.h"
#include "harness/deploy/witness_wire.h"
#include "harness/scenario/scenario.h"
#include "harness/transport/transport.h"
#include "tests/support/test_support.h"
#include "tests/system/transport_world.h"

using namespace isoharness;
using namespace std::chrono_literals;

namespace {

test::TransportWorld& world() {
  static std::unique_ptr<test::TransportWorld> w = [] {
    test::require_system({"ip", "nft", "sshd", "ssh-keygen"});
    return test::TransportWorld::create({.sftp = true, .head = true, .jump_sftp = true});
  }();
  return *w;
}

void write_log(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string line(long long ms, const std::string& rest) {
  return "W1 " + std::to_string(ms) + " " + rest + "\n";
}

// A hawk profile whose witness log is read over SSH from the world's jumphost.
scenario::DeploymentProfile ssh_profile(const std::string& path, const std::string& host_key) {
  const auto& w = world();
  return scenario::parse_deployment(
      "backend: hawk\nruntime_classes: [gvisor]\nhawk:\n  cli: /opt/hawk\n  human: alice\n"
      "  jumphost_host_key: \"" +
          w.route.jump.host_key +
          "\"\negress:\n  internet_canary: \"203.0.113.40:443\"\n  metadata: \"169.254.169.254:80\"\n"
          "witness:\n  canary: 203.0.113.40\n  settle_ms: 0\n  log:\n    timeout_s: 3\n    ssh:\n      "
          "host: " +
          w.route.jump.host + "\n      user: root\n      identity_file: " + w.credentials.private_key_path +
          "\n      host_key: \"" + host_key + "\"\n      path: " + path + "\n",
      "w.yaml");
}

deploy::hawk::HawkOptions options(const std::string& dir) {
  deploy::hawk::HawkOptions o;
  o.work_dir = dir;
  o.runner = [](const auto&, const auto&) -> Expected<RunResult> { return make_error("no CLI here"); };
  return o;
}

}  // namespace

TEST_CASE("sftp_read_range reads a bounded range of a file, its head and its size", "[system][transport]") {
  const auto& w = world();
  const std::string path = w.dir + "/range.log";
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "line " + std::to_string(i) + "\n";
  write_log(path, text);
  auto r = transport::sftp_read_range(w.route.jump, w.credentials, path, 100, 50, 16, 10s);
  REQUIRE(r);
  CHECK(r->size == static_cast<long long>(text.size()));
  CHECK(r->head == text.substr(0, 16));
  CHECK(r->bytes == text.substr(100, 50));
  auto all = transport::sftp_read_range(w.route.jump, w.credentials, path, 0, 1 << 20, 4096, 10s);
  REQUIRE(all);
  CHECK(all->bytes == text);
  auto past = transport::sftp_read_range(w.route.jump, w.credentials, path, 1 << 20, 100, 16, 10s);
  REQUIRE(past);
  CHECK(past->bytes.empty());

  // Fails closed: a missing file, a changed host key, no key pinned, a server that never answers.
  auto missing =
      transport::sftp_read_range(w.route.jump, w.credentials, w.dir + "/absent.log", 0, 100, 16, 10s);
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.error().message, Catch::Contains("opening") && Catch::Contains("SFTP status 2"));
  auto changed = w.route.jump;
  changed.host_key = w.stranger_key;
  auto refused = transport::sftp_read_range(changed, w.credentials, path, 0, 100, 16, 10s);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("HOST KEY CHANGED"));
  auto unpinned = w.route.jump;
  unpinned.host_key.clear();
  CHECK_FALSE(transport::sftp_read_range(unpinned, w.credentials, path, 0, 100, 16, 10s));
  // A listener that accepts and never speaks: the deadline ends the read.
  const int quiet = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  REQUIRE(::bind(quiet, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(quiet, 4) == 0);
  ::getsockname(quiet, reinterpret_cast<sockaddr*>(&a), &len);
  auto silent = w.route.jump;
  silent.host = "127.0.0.1";
  silent.port = ntohs(a.sin_port);
  const auto t0 = std::chrono::steady_clock::now();
  auto timed_out = transport::sftp_read_range(silent, w.credentials, path, 0, 100, 16, 1500ms);
  ::close(quiet);
  REQUIRE_FALSE(timed_out);
  CHECK(std::chrono::steady_clock::now() - t0 < 5s);
  CHECK_THAT(timed_out.error().message, Catch::Contains("timed out"));
}

TEST_CASE("hawk backend witness: the operator's log read over SSH, incrementally and anew when replaced",
          "[system][transport][hawk]") {
  const auto& w = world();
  const std::string path = w.dir + "/witness.log";
  const long long ms = now_ms();
  const auto now = std::chrono::system_clock::now();
  // Heartbeats through each window the test reads: the witness was alive then.
  const auto beats = [&](long long from, long long to, long long step) {
    std::string out;
    for (long long t = from; t <= to; t += step) out += line(t, "heartbeat - - 0 - -");
    return out;
  };
  const std::string first = line(ms - 60000, "ready - - 0 00000000000000aa -") +
                            line(ms - 50000, "tcp-syn 192.0.2.193 203.0.113.40 443 - -") +
                            beats(ms - 56000, ms - 44000, 1400);
  write_log(path, first);
  test::TempDir dir("ih-witness-ssh");
  deploy::hawk::HawkBackend backend(ssh_profile(path, w.route.jump.host_key), options(dir.str()));
  deploy::SandboxHandle h;
  h.route.jump = w.route.jump;
  h.route.sandbox.host = "192.0.2.193";
  auto old = backend.witness(h, "0123456789abcdef", now - 55s, now - 45s);
  REQUIRE(old);
  INFO(old->note);
  CHECK(old->complete);
  CHECK(old->records.size() == 1);
  CHECK_THAT(old->witness, Catch::Contains("sftp://root@" + w.route.jump.host));

  // The log grows: only what it gained is read, and the new record is there.
  std::ofstream(path, std::ios::app) << line(ms - 40000,
                                             "udp 192.0.2.99 203.0.113.40 53 0123456789abcdef -") +
                                            beats(ms - 41500, ms - 38500, 1000);
  auto grown = backend.witness(h, "0123456789abcdef", now - 41s, now - 39s);
  REQUIRE(grown);
  CHECK(grown->complete);
  CHECK(grown->records.size() == 1);
  // Another log at the same path (a new witness): read from its start, the old one forgotten.
  write_log(path, line(ms - 20000, "ready - - 0 00000000000000bb -") +
                      line(ms - 10000, "heartbeat - - 0 - -") +
                      line(ms, "tcp-syn 192.0.2.193 203.0.113.40 443 - -") +
                      line(ms, "udp 192.0.2.99 203.0.113.40 53 0123456789abcdef -") +
                      line(ms, "icmp-echo 192.0.2.99 203.0.113.40 0 0123456789abcdef -") +
                      beats(ms - 1200, ms + 1000, 200));
  auto replaced = backend.witness(h, "0123456789abcdef", now - 1s, now + 1s);
  REQUIRE(replaced);
  INFO(replaced->note);
  CHECK(replaced->complete);
  CHECK(replaced->records.size() == 3);
  auto back = backend.witness(h, "0123456789abcdef", now - 55s, now - 45s);
  REQUIRE(back);
  CHECK_FALSE(back->complete);

  // Not judged on: the log gone, a changed host key.
  std::filesystem::rename(path, path + ".moved");
  auto gone = backend.witness(h, "0123456789abcdef", now - 1s, now + 1s);
  REQUIRE(gone);
  CHECK_FALSE(gone->complete);
  CHECK_THAT(gone->note, Catch::Contains("could not be read over SSH") && Catch::Contains("SFTP status 2"));
  std::filesystem::rename(path + ".moved", path);
  deploy::hawk::HawkBackend stranger(ssh_profile(path, w.stranger_key), options(dir.str()));
  auto refused = stranger.witness(h, "0123456789abcdef", now - 1s, now + 1s);
  REQUIRE(refused);
  CHECK_FALSE(refused->complete);
  CHECK_THAT(refused->note,
             Catch::Contains("could not be read over SSH") && Catch::Contains("HOST KEY CHANGED"));
}
