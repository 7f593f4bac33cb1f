// The operator-run witness on a deployment (docs/CONTRACTS.md §4.4): the profile's witness:
// section, the targets it adds, the bounded HTTP reader (parser on fixture text, the reader
// against a real server on 127.0.0.1) and HawkBackend::witness end to end on that server.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <thread>

#include "harness/common/error.h"
#include "harness/deploy/factory/backend_factory.h"
#include "harness/deploy/hawk/hawk_backend.h"
#include "harness/deploy/hawk/witness_http.h"
#include "harness/deploy/witness_log.h"
#include "harness/deploy/witness_wire.h"
#include "harness/scenario/scenario.h"

using namespace isoharness;
using namespace isoharness::deploy::hawk;
using namespace std::chrono_literals;

namespace {

const std::string kBase = R"(backend: hawk
runtime_classes: [gvisor]
hawk:
  cli: /opt/hawk
  human: alice
  jumphost_host_key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIATa7TySBAxRWg7jZr8RowgcPkvoBS1hRj1AjCT4GERa"
egress:
  internet_canary: "203.0.113.40:443"
  metadata: "169.254.169.254:80"
)";

std::string witness_error(const std::string& section) {
  try {
    scenario::parse_deployment(kBase + section, "w.yaml");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

// One HTTP server on 127.0.0.1 that answers `answers` connections with `reply` each.
struct TinyServer {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int port = 0;
  std::string request;
  std::thread thread;
  std::vector<std::string> requests;
  TinyServer(std::string reply, int answers, std::chrono::milliseconds hold = 0ms)
      : TinyServer(std::vector<std::string>(static_cast<std::size_t>(answers), std::move(reply)), hold) {}
  // One connection answered with each reply in turn.
  explicit TinyServer(std::vector<std::string> replies, std::chrono::milliseconds hold = 0ms) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 4) == 0);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    thread = std::thread([this, replies = std::move(replies), hold] {
      for (const auto& reply : replies) {
        const int c = ::accept(fd, nullptr, nullptr);
        if (c < 0) return;
        char buf[2048];
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n > 0) request.assign(buf, static_cast<std::size_t>(n));
        requests.push_back(request);
        std::this_thread::sleep_for(hold);
        (void)!::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
        ::close(c);
      }
    });
  }
  ~TinyServer() {
    ::shutdown(fd, SHUT_RDWR);
    thread.join();
    ::close(fd);
  }
};

}  // namespace

TEST_CASE("witness: section: canaries, zone, log URL and bounds are read and checked", "[hawk]") {
  auto p = scenario::parse_deployment(kBase + R"(witness:
  canary: 203.0.113.40
  canary6: "2001:DB8:100:0::40"
  zone: witness.example.org
  udp_ports: [53]
  log: { http: "http://jumphost:8053/witness.log", max_bytes: 65536, timeout_s: 5, token_file: /etc/witness.token }
  clock_slack_ms: 2000
)",
                                      "w.yaml");
  REQUIRE(p.witness);
  CHECK(p.witness->canary == "203.0.113.40");
  CHECK(p.witness->canary6 == "2001:db8:100::40");  // the form a witness logs
  CHECK(p.witness->zone == "witness.example.org");
  CHECK(p.witness->udp_ports == std::vector<int>{53});
  CHECK(p.witness->log_host == "jumphost");
  CHECK(p.witness->log_port == 8053);
  CHECK(p.witness->log_path == "/witness.log");
  CHECK(p.witness->max_log_bytes == 65536);
  CHECK(p.witness->log_timeout_s == 5);
  CHECK(p.witness->clock_slack_ms == 2000);
  CHECK(p.witness->log_token_file == "/etc/witness.token");
  CHECK(p.witness->log_token_env.empty());
  CHECK_FALSE(scenario::parse_deployment(kBase, "w.yaml").witness);
  // The token: exactly one of a file and a variable.
  const std::string log_at = "witness: { canary: 203.0.113.40, log: { http: \"http://192.0.2.1/w\"";
  CHECK_THAT(witness_error(log_at + " } }\n"), Catch::Contains("exactly one of token_file"));
  CHECK_THAT(witness_error(log_at + ", token_file: /a, token_env: B } }\n"),
             Catch::Contains("exactly one of token_file"));
  CHECK_THAT(witness_error(log_at + ", token_file: rel } }\n"),
             Catch::Contains("token_file must be an absolute path"));
  CHECK_THAT(witness_error(log_at + ", token_env: \"a b\" } }\n"), Catch::Contains("token_env must be"));
  CHECK(witness_error(log_at + ", token_env: WITNESS_TOKEN } }\n").empty());

  CHECK_THAT(witness_error("witness: { log: { http: \"http://192.0.2.1/w\" } }\n"),
             Catch::Contains("witness.canary is required"));
  CHECK_THAT(
      witness_error("witness: { canary: canary.example.com, log: { http: \"http://192.0.2.1/w\" } }\n"),
      Catch::Contains("witness.canary is required"));
  CHECK_THAT(witness_error("witness: { canary: 203.0.113.40 }\n"),
             Catch::Contains("witness.log is required"));
  for (const char* url :
       {"https://192.0.2.1/w", "http://log.example.com/w", "http://192.0.2.1:0/w", "http://192.0.2.1",
        "http://192.0.2.1/w x", "http://192.0.2.1/w\\r\\nX: y", "http://192.0.2.1/w?q=1"}) {
    INFO(url);
    CHECK_THAT(
        witness_error(std::string("witness: { canary: 203.0.113.40, log: { http: \"") + url + "\" } }\n"),
        Catch::Contains("witness.log http must be"));
  }
  CHECK_THAT(witness_error("witness: { canary: 203.0.113.40, zone: \"Bad_Zone.\", log: { http: "
                           "\"http://192.0.2.1/w\" } }\n"),
             Catch::Contains("witness.zone must be"));
  CHECK_THAT(
      witness_error("witness: { canary: 203.0.113.40, udp_ports: [0], log: { http: \"http://192.0.2.1/w\", "
                    "max_bytes: 10 } }\n"),
      Catch::Contains("udp_ports") && Catch::Contains("max_bytes"));
  CHECK_THAT(
      witness_error("witness: { canary: 203.0.113.40, ssh: x, log: { http: \"http://192.0.2.1/w\" } }\n"),
      Catch::Contains("unknown key 'ssh'"));
}

TEST_CASE("witness: targets aimed at the operator's canaries, covered by its witness only there", "[hawk]") {
  auto p = scenario::parse_deployment(kBase + R"(witness:
  canary: 203.0.113.40
  canary6: 2001:db8:100::40
  zone: witness.example.org
  log: { http: "http://192.0.2.1:8053/witness.log", token_env: WITNESS_TOKEN }
)",
                                      "w.yaml");
  std::map<std::string, deploy::EgressTarget> by_name;
  for (const auto& t : deploy::probe_targets(p)) by_name[t.name] = t;
  CHECK(by_name.at("internet-canary").witness_address == "203.0.113.40");  // the profile's own, at the canary
  CHECK(by_name.at("metadata").witness_address.empty());                   // not the witness's to see
  CHECK(by_name.at("canary-tcp").port == 443);
  CHECK(by_name.at("canary-udp").port == 53);
  CHECK(by_name.at("canary-udp-443").proto == "udp");
  CHECK(by_name.at("canary-icmp").proto == "icmp");
  CHECK(by_name.at("canary6-udp").witness_address == "2001:db8:100::40");
  CHECK(by_name.count("canary6-tcp") == 0);  // a SYN has no nonce and the sandbox's v6 address is unknown
  CHECK(by_name.at("dns-exfil").proto == "exfil");
  CHECK(by_name.at("dns-exfil").domain == "probe.witness.example.org");
  CHECK(by_name.at("dns-exfil").witness_address == "witness.example.org");
  // Without the section nothing is covered: the checks stay sandbox-reported.
  for (const auto& t : deploy::probe_targets(scenario::parse_deployment(kBase, "w.yaml")))
    CHECK(t.witness_address.empty());
}

TEST_CASE("witness HTTP answers: 200 with a body, bounded; anything else refused", "[hawk]") {
  auto ok = parse_http_answer("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nW1 1 ready - - 0 - -\n",
                              100, false);
  REQUIRE(ok);
  CHECK(ok->body == "W1 1 ready - - 0 - -\n");
  CHECK_FALSE(ok->truncated);
  auto big = parse_http_answer("HTTP/1.1 200 OK\r\n\r\n0123456789", 4, false);
  REQUIRE(big);
  CHECK(big->body == "0123");
  CHECK(big->truncated);
  CHECK(parse_http_answer("HTTP/1.1 200 OK\r\n\r\n01", 4, true)->truncated);  // the read stopped at its bound
  CHECK_THAT(parse_http_answer("HTTP/1.0 404 Not Found\r\n\r\n", 100, false).error().message,
             Catch::Contains("404 Not Found"));
  CHECK_THAT(parse_http_answer("HTTP/1.0 302 \x1b]0;x\x07\r\n\r\n", 100, false).error().message,
             Catch::Contains("302 ?]0;x?"));
  CHECK_FALSE(parse_http_answer("SSH-2.0-OpenSSH\r\n", 100, false));
  CHECK_FALSE(parse_http_answer("HTTP/1.0 200 OK\r\nX: y", 100, false));  // headers never end
  CHECK_FALSE(parse_http_answer("", 100, false));
  CHECK(http_get_request("192.0.2.1", 8053, "/witness.log") ==
        "GET /witness.log HTTP/1.0\r\nHost: 192.0.2.1:8053\r\nUser-Agent: isoharness-witness-reader\r\n"
        "Connection: close\r\n\r\n");
}

TEST_CASE("witness HTTP reader: a real server on 127.0.0.1, bounded in bytes and time", "[hawk]") {
  TinyServer server("HTTP/1.0 200 OK\r\n\r\n" + std::string(5000, 'x'), 2);
  auto got = http_get_bounded("127.0.0.1", server.port, "/witness.log", 10000, 5s);
  REQUIRE(got);
  CHECK(got->body.size() == 5000);
  CHECK_FALSE(got->truncated);
  CHECK(server.request.rfind("GET /witness.log HTTP/1.0\r\n", 0) == 0);
  auto cut = http_get_bounded("127.0.0.1", server.port, "/witness.log", 1000, 5s);
  REQUIRE(cut);
  CHECK(cut->body.size() == 1000);
  CHECK(cut->truncated);

  TinyServer slow("HTTP/1.0 200 OK\r\n\r\nlate", 1, 3s);
  const auto t0 = std::chrono::steady_clock::now();
  auto late = http_get_bounded("127.0.0.1", slow.port, "/witness.log", 1000, 500ms);
  CHECK_FALSE(late);
  CHECK(std::chrono::steady_clock::now() - t0 < 2s);
  CHECK_THAT(late.error().message, Catch::Contains("timed out"));
  CHECK_FALSE(http_get_bounded("127.0.0.1", 1, "/witness.log", 1000, 2s));  // nothing listens
}

TEST_CASE("hawk backend witness: the operator's log read, matched on the route's address and the nonce",
          "[hawk]") {
  const auto now = std::chrono::system_clock::now();
  const long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::string log = "W1 " + std::to_string(ms - 60000) + " ready - - 0 - -\n" +  //
                          "W1 " + std::to_string(ms) + " tcp-syn 192.0.2.193 203.0.113.40 443 - -\n" + "W1 " +
                          std::to_string(ms) + " udp 192.0.2.99 203.0.113.40 53 0123456789abcdef -\n" +
                          "W1 " + std::to_string(ms) +
                          " udp 192.0.2.99 203.0.113.40 53 ffffffffffffffff -\n" + "W1 " +
                          std::to_string(ms - 30000) + " tcp-syn 192.0.2.193 203.0.113.40 443 - -\n";
  const std::string token = "operator-shared-token-0123456789";
  ::setenv("ISOHARNESS_UNIT_WITNESS_TOKEN", token.c_str(), 1);
  const std::string more =
      "W1 " + std::to_string(ms + 10) + " icmp-echo 192.0.2.99 203.0.113.40 0 0123456789abcdef -\n";
  const auto size = static_cast<long long>(log.size());
  const std::string ok = "HTTP/1.0 200 OK\r\n\r\n";
  // The first read takes the whole log; the second asks from where it stopped and gets one
  // more line; the third answer is forged (another token).
  TinyServer server(
      {ok + deploy::frame_witness_log(token, log, 0, size, 1 << 20),
       ok + deploy::frame_witness_log(token, more, size, size + static_cast<long long>(more.size()), 1 << 20),
       ok + deploy::frame_witness_log("another-token-of-some-length", "W1 1 udp - - 0 - -\n",
                                      size + static_cast<long long>(more.size()),
                                      size + static_cast<long long>(more.size()) + 19, 1 << 20)});
  auto p = scenario::parse_deployment(
      kBase +
          "witness: { canary: 203.0.113.40, settle_ms: 0, log: { timeout_s: 1, token_env: "
          "ISOHARNESS_UNIT_WITNESS_TOKEN, http: \"http://jumphost:" +
          std::to_string(server.port) + "/witness.log\" } }\n",
      "w.yaml");
  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-witness-unit";
  HawkOptions o;
  o.work_dir = dir;
  o.runner = [](const auto&, const auto&) -> Expected<RunResult> { return make_error("no CLI here"); };
  HawkBackend backend(p, o);
  deploy::SandboxHandle h;
  h.route.jump.host = "127.0.0.1";  // the jumphost of the sandbox's ssh-command line
  h.route.sandbox.host = "192.0.2.193";
  auto view = backend.witness(h, "0123456789abcdef", now - 1s, now + 1s);
  REQUIRE(view);
  CHECK(view->complete);
  CHECK(view->source == "192.0.2.193");
  CHECK(view->records.size() == 2);  // its SYN and its datagram; not another's, not one from before the probe
  CHECK_THAT(view->witness, Catch::Contains("the operator's witness") && Catch::Contains("/witness.log"));
  CHECK_THAT(view->note + view->witness, !Catch::Contains(token));

  auto second = backend.witness(h, "0123456789abcdef", now - 1s, now + 1s);  // incremental: only the new line
  REQUIRE(second);
  CHECK(second->complete);
  CHECK(second->records.size() == 3);  // the first two, kept, and the echo read now
  auto forged = backend.witness(h, "0123456789abcdef", now - 1s, now + 1s);
  REQUIRE(forged);
  CHECK_FALSE(forged->complete);
  CHECK_THAT(forged->note, Catch::Contains("rejected") && Catch::Contains("MAC"));
  CHECK_THAT(forged->note, !Catch::Contains(token));
  REQUIRE(server.requests.size() == 3);
  CHECK(server.requests[0].rfind("GET /witness.log?from=0 HTTP/1.0\r\n", 0) == 0);
  CHECK(server.requests[1].rfind("GET /witness.log?from=" + std::to_string(size) + " HTTP/1.0\r\n", 0) == 0);

  auto gone = backend.witness(h, "0123456789abcdef", now - 1s, now + 1s);  // the server answered thrice only
  REQUIRE(gone);
  CHECK_FALSE(gone->complete);
  CHECK_THAT(gone->note, Catch::Contains("could not be read"));
  CHECK_FALSE(HawkBackend(scenario::parse_deployment(kBase, "w.yaml"), o).witness(h, "", now, now));
  // No token where the profile says: nothing is judged on the log.
  ::unsetenv("ISOHARNESS_UNIT_WITNESS_TOKEN");
  auto tokenless = HawkBackend(p, o).witness(h, "0123456789abcdef", now - 1s, now + 1s);
  REQUIRE(tokenless);
  CHECK_FALSE(tokenless->complete);
  CHECK_THAT(tokenless->note, Catch::Contains("ISOHARNESS_UNIT_WITNESS_TOKEN") && Catch::Contains("missing"));
  // A route that names the sandbox by a name: only the nonce ties records to it.
  deploy::WitnessLog hostile =
      deploy::parse_witness_log("W1 5 ready - - 0 - -\nW1 6 tcp-syn - 203.0.113.40 443 - -\n");
  CHECK(deploy::select_witness_records(hostile, "", "", "", 0, 10).records.empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("witness wire format: each line's MAC and place checked, the token never sent", "[hawk]") {
  const std::string key = "operator-shared-token-0123456789";
  const std::string log = "W1 1 ready - - 0 - -\nW1 2 udp 192.0.2.9 203.0.113.40 53 00ff -\nW1 3 udp";
  const std::string body =
      deploy::frame_witness_log(key, log, 100, 100 + static_cast<long long>(log.size()), 1 << 20);
  CHECK(body.find(key) == std::string::npos);
  auto f = deploy::read_witness_frames(body, key, 100);
  CHECK(f.problem.empty());
  CHECK(f.lines ==
        "W1 1 ready - - 0 - -\nW1 2 udp 192.0.2.9 203.0.113.40 53 00ff -\n");  // the unfinished line waits
  CHECK(f.next_offset == 100 + 21 + 42);
  CHECK(f.log_size == 100 + static_cast<long long>(log.size()));
  CHECK(deploy::witness_mac("key", "The quick brown fox jumps over the lazy dog") ==
        "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8");  // RFC 4231-style known answer
  // Another key: the start line fails.
  CHECK_THAT(deploy::read_witness_frames(body, "another-key-0123456789", 100).problem,
             Catch::Contains("MAC"));
  // Asked from elsewhere: the answer does not fit the question.
  CHECK_THAT(deploy::read_witness_frames(body, key, 0).problem, Catch::Contains("not 0"));
  // A line changed in transit: rejected, and nothing after it is taken.
  std::string changed = body;
  changed.replace(changed.find("192.0.2.9"), 9, "192.0.2.8");
  auto c = deploy::read_witness_frames(changed, key, 100);
  CHECK(c.rejected == 1);
  CHECK(c.lines == "W1 1 ready - - 0 - -\n");
  CHECK_THAT(c.problem, Catch::Contains("byte 121"));
  // A line dropped in transit: the next one's offset gives it away.
  const auto first_end = body.find('\n', body.find('\n') + 1);
  std::string dropped = body.substr(0, body.find('\n') + 1) + body.substr(first_end + 1);
  CHECK(deploy::read_witness_frames(dropped, key, 100).rejected == 1);
  // The log shrank below what was read: the log was replaced.
  const std::string shrunk = deploy::frame_witness_log(key, "", 500, 40, 1 << 20);
  CHECK_THAT(deploy::read_witness_frames(shrunk, key, 500).problem, Catch::Contains("shrank"));
  CHECK_THAT(deploy::read_witness_frames("W1 1 ready - - 0 - -\n", key, 0).problem,
             Catch::Contains("start line"));
  // An answer bounded in bytes carries whole lines only.
  const std::string small = deploy::frame_witness_log(key, log, 0, static_cast<long long>(log.size()), 200);
  CHECK(small.size() <= 200);
  CHECK(deploy::read_witness_frames(small, key, 0).lines == "W1 1 ready - - 0 - -\n");
}

TEST_CASE("hawk backend witness: the wait after the probe ends at the witness's next heartbeat", "[hawk]") {
  const auto now = std::chrono::system_clock::now();
  const long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::string token = "operator-shared-token-0123456789";
  ::setenv("ISOHARNESS_UNIT_WITNESS_TOKEN", token.c_str(), 1);
  const std::string log = "W1 " + std::to_string(ms - 60000) + " ready - - 0 - -\n" +  //
                          "W1 " + std::to_string(ms) + " tcp-syn 192.0.2.193 203.0.113.40 443 - -\n";
  const std::string beat = "W1 " + std::to_string(ms + 5) + " heartbeat - - 0 - -\n";
  const auto size = static_cast<long long>(log.size());
  const auto size2 = size + static_cast<long long>(beat.size());
  const std::string ok = "HTTP/1.0 200 OK\r\n\r\n";
  // First read: the log as the probe ended; second: a heartbeat written after it; third:
  // the view's own read, nothing new.
  TinyServer server({ok + deploy::frame_witness_log(token, log, 0, size, 1 << 20),
                     ok + deploy::frame_witness_log(token, beat, size, size2, 1 << 20),
                     ok + deploy::frame_witness_log(token, "", size2, size2, 1 << 20)});
  auto p = scenario::parse_deployment(
      kBase +
          "witness: { canary: 203.0.113.40, settle_ms: 4000, log: { timeout_s: 1, token_env: "
          "ISOHARNESS_UNIT_WITNESS_TOKEN, http: \"http://jumphost:" +
          std::to_string(server.port) + "/witness.log\" } }\n",
      "w.yaml");
  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-witness-settle-unit";
  HawkOptions o;
  o.work_dir = dir;
  o.runner = [](const auto&, const auto&) -> Expected<RunResult> { return make_error("no CLI here"); };
  HawkBackend backend(p, o);
  deploy::SandboxHandle h;
  h.route.jump.host = "127.0.0.1";
  h.route.sandbox.host = "192.0.2.193";
  const auto asked = std::chrono::steady_clock::now();
  auto view = backend.witness(h, "0123456789abcdef", now - 1s, now + 1s);
  const auto waited = std::chrono::steady_clock::now() - asked;
  REQUIRE(view);
  CHECK(view->complete);
  CHECK(view->records.size() == 1);
  CHECK(server.requests.size() == 3);
  CHECK(waited < 2s);  // not settle_ms: the fresh heartbeat ended the wait
  ::unsetenv("ISOHARNESS_UNIT_WITNESS_TOKEN");
  std::filesystem::remove_all(dir);
}

TEST_CASE("witness cursor: records kept across reads, bounded, a forgotten window not judged", "[hawk]") {
  WitnessLogCursor cursor;
  deploy::WitnessFrames f;
  f.lines = "W1 1 ready - - 0 - -\nW1 10 udp 192.0.2.9 203.0.113.40 53 00ff -\n";
  f.next_offset = 60;
  absorb(cursor, f, 2);
  CHECK(cursor.offset == 60);
  CHECK(cursor.log.ready);
  CHECK(cursor.beats == 1);  // the ready line: the witness's first sign of life
  CHECK(cursor.log.records.size() == 1);
  f.lines = "W1 20 udp 192.0.2.9 203.0.113.40 53 00ff -\nW1 30 udp 192.0.2.9 203.0.113.40 53 00ff -\n";
  f.next_offset = 140;
  f.rejected = 1;
  absorb(cursor, f, 2);
  CHECK(cursor.offset == 140);
  CHECK(cursor.rejected == 1);
  CHECK(cursor.beats == 1);
  REQUIRE(cursor.log.records.size() == 2);
  CHECK(cursor.log.records.front().unix_ms == 20);
  CHECK(cursor.forgotten_to_ms == 10);
  // Heartbeats are counted as they come (the wait for a fresh one compares counts).
  f.lines = "W1 40 heartbeat - - 0 - -\nW1 50 heartbeat - - 0 - -\n";
  f.next_offset = 200;
  f.rejected = 0;
  absorb(cursor, f, 2);
  CHECK(cursor.beats == 3);
  CHECK(cursor.log.records.size() == 2);
}
