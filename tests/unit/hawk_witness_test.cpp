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
  const std::string log =
      "W1 " + std::to_string(ms - 60000) + " ready - - 0 - -\n" +  //
      "W1 " + std::to_string(ms) + " tcp-syn 192.0.2.193 203.0.113.40 443 - -\n" + "W1 " +
      std::to_string(ms) + " udp 192.0.2.99 203.0.113.40 53 0123456789abcdef -\n" + "W1 " +
      std::to_string(ms) + " udp 192.0.2.99 203.0.113.40 53 ffffffffffffffff -\n" + "W1 " +
      std::to_string(ms - 30000) + " tcp-syn 192.0.2.193 203.0.113.40 443 - -\n" +
      // heartbeats through the probe's window: the witness was alive
      "W1 " + std::to_string(ms - 1200) + " heartbeat - - 0 - -\n" + "W1 " + std::to_string(ms - 100) +
      " heartbeat - - 0 - -\n" + "W1 " + std::to_string(ms + 1000) + " heartbeat - - 0 - -\n";
  const std::string token = "operator-shared-token-0123456789";
  ::setenv("ISOHARNESS_UNIT_WITNESS_TOKEN", token.c_str(), 1);
  const std::string more =
      "W1 " + std::to_string(ms + 10) + " icmp-echo 192.0.2.99 203.0.113.40 0 0123456789abcdef -\n";
  const auto size = static_cast<long long>(log.size());
  const std::string ok = "HTTP/1.0 200 OK\r\n\r\n";
  // The first read takes the whole log; the second asks from where it stopped and gets one
  // more line; the third answer is forged (another token).
  const std::string id = deploy::witness_log_id(log);
  TinyServer server(
      {ok + deploy::frame_witness_log(token, id, log, 0, size, 1 << 20),
       ok + deploy::frame_witness_log(token, id, more, size, size + static_cast<long long>(more.size()),
                                      1 << 20),
       ok + deploy::frame_witness_log("another-token-of-some-length", id, "W1 1 udp - - 0 - -\n",
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
  const std::string id = "0123456789abcdef0123456789abcdef";
  const std::string body =
      deploy::frame_witness_log(key, id, log, 100, 100 + static_cast<long long>(log.size()), 1 << 20);
  CHECK(body.find(key) == std::string::npos);
  auto f = deploy::read_witness_frames(body, key, 100, id);
  CHECK(f.problem.empty());
  CHECK(f.lines ==
        "W1 1 ready - - 0 - -\nW1 2 udp 192.0.2.9 203.0.113.40 53 00ff -\n");  // the unfinished line waits
  CHECK(f.next_offset == 100 + 21 + 42);
  CHECK(f.log_size == 100 + static_cast<long long>(log.size()));
  CHECK(deploy::witness_mac("key", "The quick brown fox jumps over the lazy dog") ==
        "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8");  // RFC 4231-style known answer
  // Another key: the start line fails.
  CHECK_THAT(deploy::read_witness_frames(body, "another-key-0123456789", 100, id).problem,
             Catch::Contains("MAC"));
  // Asked from elsewhere: the answer does not fit the question.
  CHECK_THAT(deploy::read_witness_frames(body, key, 0, id).problem, Catch::Contains("not 0"));
  // A line changed in transit: rejected, and nothing after it is taken.
  std::string changed = body;
  changed.replace(changed.find("192.0.2.9"), 9, "192.0.2.8");
  auto c = deploy::read_witness_frames(changed, key, 100, id);
  CHECK(c.rejected == 1);
  CHECK(c.lines == "W1 1 ready - - 0 - -\n");
  CHECK_THAT(c.problem, Catch::Contains("byte 121"));
  // A line dropped in transit: the next one's offset gives it away.
  const auto first_end = body.find('\n', body.find('\n') + 1);
  std::string dropped = body.substr(0, body.find('\n') + 1) + body.substr(first_end + 1);
  CHECK(deploy::read_witness_frames(dropped, key, 100, id).rejected == 1);
  CHECK_THAT(deploy::read_witness_frames("W1 1 ready - - 0 - -\n", key, 0, "").problem,
             Catch::Contains("start line"));
  // An answer bounded in bytes carries whole lines only.
  const std::string small =
      deploy::frame_witness_log(key, id, log, 0, static_cast<long long>(log.size()), 240);
  CHECK(small.size() <= 240);
  CHECK(deploy::read_witness_frames(small, key, 0, "").lines == "W1 1 ready - - 0 - -\n");
}

TEST_CASE(
    "hawk backend witness: an operator's witness that went silent before the window ends is not judged on",
    "[hawk]") {
  const auto now = std::chrono::system_clock::now();
  const long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::string token = "operator-shared-token-0123456789";
  ::setenv("ISOHARNESS_UNIT_WITNESS_TOKEN3", token.c_str(), 1);
  // Alive until 1.2 s before the probe's window, then nothing: "nothing arrived" cannot be read
  // from this log, whatever else it holds.
  const std::string log = "W1 " + std::to_string(ms - 60000) + " ready - - 0 - -\n" +  //
                          "W1 " + std::to_string(ms - 2200) + " heartbeat - - 0 - -\n";
  const auto size = static_cast<long long>(log.size());
  const std::string ok = "HTTP/1.0 200 OK\r\n\r\n";
  const std::string id = deploy::witness_log_id(log);
  TinyServer server({ok + deploy::frame_witness_log(token, id, log, 0, size, 1 << 20)});
  auto p = scenario::parse_deployment(
      kBase +
          "witness: { canary: 203.0.113.40, settle_ms: 0, log: { timeout_s: 1, token_env: "
          "ISOHARNESS_UNIT_WITNESS_TOKEN3, http: \"http://jumphost:" +
          std::to_string(server.port) + "/witness.log\" } }\n",
      "w.yaml");
  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-witness-silent-unit";
  HawkOptions o;
  o.work_dir = dir;
  o.runner = [](const auto&, const auto&) -> Expected<RunResult> { return make_error("no CLI here"); };
  HawkBackend backend(p, o);
  deploy::SandboxHandle h;
  h.route.jump.host = "127.0.0.1";
  h.route.sandbox.host = "192.0.2.193";
  auto view = backend.witness(h, "0123456789abcdef", now - 1s, now + 1s);
  REQUIRE(view);
  CHECK_FALSE(view->complete);
  CHECK(view->records.empty());
  CHECK_THAT(view->note, Catch::Contains("heartbeat"));
  ::unsetenv("ISOHARNESS_UNIT_WITNESS_TOKEN3");
  std::filesystem::remove_all(dir);
}

TEST_CASE("hawk backend witness: the wait after the probe ends at the witness's next heartbeat", "[hawk]") {
  const auto now = std::chrono::system_clock::now();
  const long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::string token = "operator-shared-token-0123456789";
  ::setenv("ISOHARNESS_UNIT_WITNESS_TOKEN", token.c_str(), 1);
  const std::string log = "W1 " + std::to_string(ms - 60000) + " ready - - 0 - -\n" +     //
                          "W1 " + std::to_string(ms - 1200) + " heartbeat - - 0 - -\n" +  //
                          "W1 " + std::to_string(ms - 600) + " heartbeat - - 0 - -\n" +   //
                          "W1 " + std::to_string(ms + 300) + " heartbeat - - 0 - -\n" +   //
                          "W1 " + std::to_string(ms) + " tcp-syn 192.0.2.193 203.0.113.40 443 - -\n";
  const std::string beat = "W1 " + std::to_string(ms + 1005) + " heartbeat - - 0 - -\n";
  const auto size = static_cast<long long>(log.size());
  const auto size2 = size + static_cast<long long>(beat.size());
  const std::string ok = "HTTP/1.0 200 OK\r\n\r\n";
  // First read: the log as the probe ended; second: a heartbeat written after it; third:
  // the view's own read, nothing new.
  const std::string id = deploy::witness_log_id(log);
  TinyServer server({ok + deploy::frame_witness_log(token, id, log, 0, size, 1 << 20),
                     ok + deploy::frame_witness_log(token, id, beat, size, size2, 1 << 20),
                     ok + deploy::frame_witness_log(token, id, "", size2, size2, 1 << 20)});
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

TEST_CASE("witness wire format: the log's identity, a replaced or truncated log, a forged identity",
          "[hawk]") {
  const std::string key = "operator-shared-token-0123456789";
  // The identity is the first line's: the same log grown keeps it, another first line changes it.
  const std::string id = deploy::witness_log_id("W1 1 ready - - 0 0011223344556677 -\n");
  CHECK(id.size() == 32);
  CHECK(deploy::witness_log_id("W1 1 ready - - 0 0011223344556677 -\nW1 2 heartbeat - - 0 - -\n") == id);
  CHECK(deploy::witness_log_id("W1 1 ready - - 0 8899aabbccddeeff -\n") != id);
  CHECK(deploy::witness_log_id("W1 1 ready - -") == "-");  // no whole line yet: no identity
  CHECK(deploy::witness_log_id(std::string(5000, 'x')) == deploy::witness_log_id(std::string(4096, 'x')));
  const std::string other = deploy::witness_log_id("W1 9 ready - - 0 8899aabbccddeeff -\n");
  const std::string log = "W1 5 udp 192.0.2.9 203.0.113.40 53 00ff -\n";

  // Another log at the address: authenticated, so the reader starts again; none of its lines taken.
  const std::string swapped = deploy::frame_witness_log(key, other, log, 300, 400, 1 << 20);
  auto s = deploy::read_witness_frames(swapped, key, 300, id);
  CHECK(s.problem.empty());
  CHECK(s.replaced);
  CHECK(s.lines.empty());
  CHECK(s.log_id == other);
  CHECK_FALSE(deploy::read_witness_frames(swapped, key, 300, other).replaced);
  CHECK_FALSE(deploy::read_witness_frames(swapped, key, 300, "").replaced);  // nothing read yet
  // The same log, shorter than what was read: truncated, read again from byte 0.
  const std::string shrunk = deploy::frame_witness_log(key, id, "", 500, 40, 1 << 20);
  auto t = deploy::read_witness_frames(shrunk, key, 500, id);
  CHECK(t.problem.empty());
  CHECK(t.replaced);
  // A forged identity (the start line's id changed, its MAC not): refused, no restart.
  std::string forged = deploy::frame_witness_log(key, id, log, 300, 400, 1 << 20);
  forged.replace(forged.find(id), id.size(), other);
  auto f = deploy::read_witness_frames(forged, key, 300, id);
  CHECK_THAT(f.problem, Catch::Contains("MAC"));
  CHECK_FALSE(f.replaced);
  CHECK(f.log_id.empty());
  // Lines MAC'd under another log's identity do not pass under this one's start line.
  const std::string mine = deploy::frame_witness_log(key, id, log, 300, 400, 1 << 20);
  const std::string theirs = deploy::frame_witness_log(key, other, log, 300, 400, 1 << 20);
  const std::string spliced = mine.substr(0, mine.find('\n') + 1) + theirs.substr(theirs.find('\n') + 1);
  auto sp = deploy::read_witness_frames(spliced, key, 300, id);
  CHECK(sp.rejected == 1);
  CHECK(sp.lines.empty());
  CHECK(deploy::read_witness_frames(mine, key, 300, id).lines == log);
}

TEST_CASE("witness cursor: a replaced log starts again at byte 0, its old records forgotten", "[hawk]") {
  WitnessLogCursor cursor;
  deploy::WitnessFrames f;
  f.log_id = "0123456789abcdef0123456789abcdef";
  f.lines =
      "W1 1 ready - - 0 - -\nW1 10 udp 192.0.2.9 203.0.113.40 53 00ff -\nW1 15 heartbeat - - 0 - -\n"
      "W1 12 quota 192.0.2.9 - 0 - -\n";
  f.next_offset = 120;
  absorb(cursor, f);
  CHECK(cursor.log_id == f.log_id);
  CHECK(cursor.newest_ms == 15);
  CHECK(cursor.log.quotas.size() == 1);  // a quota line is kept across reads
  deploy::WitnessFrames r;
  r.log_id = "fedcba9876543210fedcba9876543210";
  r.replaced = true;
  r.next_offset = 400;
  absorb(cursor, r);  // a replaced answer moves nothing
  CHECK(cursor.offset == 120);
  CHECK(cursor.log_id == f.log_id);
  restart(cursor, r.log_id);
  CHECK(cursor.offset == 0);
  CHECK(cursor.log_id == r.log_id);
  CHECK(cursor.log.records.empty());
  CHECK(cursor.log.quotas.empty());
  CHECK_FALSE(cursor.log.ready);
  CHECK(cursor.forgotten_to_ms == 15);  // a window reaching back into the old log is not judged
  CHECK(cursor.restarts == 1);
}

TEST_CASE("hawk backend witness: a new log at the same address is read from its start", "[hawk]") {
  const auto now = std::chrono::system_clock::now();
  const long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const auto line = [](long long t, const std::string& rest) {
    return "W1 " + std::to_string(t) + " " + rest + "\n";
  };
  // Each log's heartbeats cover the window the test reads it for.
  const auto beats = [&](long long from, long long to, long long step) {
    std::string out;
    for (long long t = from; t <= to; t += step) out += line(t, "heartbeat - - 0 - -");
    return out;
  };
  const std::string old_log = line(ms - 60000, "ready - - 0 00000000000000aa -") +
                              line(ms - 50000, "tcp-syn 192.0.2.193 203.0.113.40 443 - -") +
                              beats(ms - 56000, ms - 44000, 1400);
  const std::string new_log =
      line(ms - 20000, "ready - - 0 00000000000000bb -") + line(ms - 10000, "heartbeat - - 0 - -") +
      line(ms, "tcp-syn 192.0.2.193 203.0.113.40 443 - -") +
      line(ms, "udp 192.0.2.99 203.0.113.40 53 0123456789abcdef -") + beats(ms - 1200, ms + 1000, 200);
  const auto old_size = static_cast<long long>(old_log.size());
  const auto new_size = static_cast<long long>(new_log.size());
  const std::string old_id = deploy::witness_log_id(old_log), new_id = deploy::witness_log_id(new_log);
  const std::string token = "operator-shared-token-0123456789";
  ::setenv("ISOHARNESS_UNIT_WITNESS_TOKEN2", token.c_str(), 1);
  const std::string ok = "HTTP/1.0 200 OK\r\n\r\n";
  const std::string truncated = line(ms - 20000, "ready - - 0 00000000000000bb -");
  TinyServer server({
      ok + deploy::frame_witness_log(token, old_id, old_log, 0, old_size, 1 << 20),
      // The next eval's world: a new log at the old address, read from the old offset.
      ok + deploy::frame_witness_log(token, new_id, new_log.substr(static_cast<std::size_t>(old_size)),
                                     old_size, new_size, 1 << 20),
      ok + deploy::frame_witness_log(token, new_id, new_log, 0, new_size, 1 << 20),
      ok + deploy::frame_witness_log(token, new_id, "", new_size, new_size, 1 << 20),
      // The same log, truncated below what was read.
      ok + deploy::frame_witness_log(token, new_id, "", new_size, static_cast<long long>(truncated.size()),
                                     1 << 20),
      ok + deploy::frame_witness_log(token, new_id, truncated, 0, static_cast<long long>(truncated.size()),
                                     1 << 20),
      // A forged identity: refused, and the cursor stays where it was.
      ok + deploy::frame_witness_log("another-token-of-some-length", old_id, "",
                                     static_cast<long long>(truncated.size()),
                                     static_cast<long long>(truncated.size()), 1 << 20),
  });
  auto p = scenario::parse_deployment(
      kBase +
          "witness: { canary: 203.0.113.40, settle_ms: 0, log: { timeout_s: 1, token_env: "
          "ISOHARNESS_UNIT_WITNESS_TOKEN2, http: \"http://jumphost:" +
          std::to_string(server.port) + "/witness.log\" } }\n",
      "w.yaml");
  const std::string dir = std::filesystem::temp_directory_path() / "isoharness-hawk-witness-unit-replaced";
  HawkOptions o;
  o.work_dir = dir;
  o.runner = [](const auto&, const auto&) -> Expected<RunResult> { return make_error("no CLI here"); };
  HawkBackend backend(p, o);
  deploy::SandboxHandle h;
  h.route.jump.host = "127.0.0.1";
  h.route.sandbox.host = "192.0.2.193";
  auto first = backend.witness(h, "0123456789abcdef", now - 55s, now - 45s);
  REQUIRE(first);
  CHECK(first->complete);
  CHECK(first->records.size() == 1);  // the old log's SYN

  auto second = backend.witness(h, "0123456789abcdef", now - 1s, now + 1s);
  REQUIRE(second);
  CHECK(second->complete);
  CHECK(second->records.size() == 2);  // the new log's SYN and datagram, every one of them
  auto back = backend.witness(h, "0123456789abcdef", now - 55s, now - 45s);
  REQUIRE(back);
  CHECK_FALSE(back->complete);  // the old log's window: its records were forgotten
  CHECK_THAT(back->note, Catch::Contains("before the records the harness keeps"));

  // Truncated: what the log held is gone, so no window up to its newest line is judged.
  auto cut = backend.witness(h, "0123456789abcdef", now - 1s, now + 1s);
  REQUIRE(cut);
  CHECK_FALSE(cut->complete);
  CHECK(cut->records.empty());
  CHECK_THAT(cut->note, Catch::Contains("before the records the harness keeps"));
  auto forged = backend.witness(h, "0123456789abcdef", now - 1s, now + 1s);
  REQUIRE(forged);
  CHECK_FALSE(forged->complete);
  CHECK_THAT(forged->note, Catch::Contains("MAC"));
  REQUIRE(server.requests.size() == 7);
  const auto from = [](long long n) {
    return "GET /witness.log?from=" + std::to_string(n) + " HTTP/1.0\r\n";
  };
  CHECK(server.requests[1].rfind(from(old_size), 0) == 0);
  CHECK(server.requests[2].rfind(from(0), 0) == 0);
  CHECK(server.requests[3].rfind(from(new_size), 0) == 0);
  CHECK(server.requests[4].rfind(from(new_size), 0) == 0);
  CHECK(server.requests[5].rfind(from(0), 0) == 0);
  CHECK(server.requests[6].rfind(from(static_cast<long long>(truncated.size())), 0) == 0);
  ::unsetenv("ISOHARNESS_UNIT_WITNESS_TOKEN2");
  std::filesystem::remove_all(dir);
}

TEST_CASE("witness: log.ssh names the log file on an SSH server, its host key pinned", "[hawk]") {
  const std::string key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIATa7TySBAxRWg7jZr8RowgcPkvoBS1hRj1AjCT4GERa";
  auto p = scenario::parse_deployment(kBase +
                                          "witness:\n  canary: 203.0.113.40\n  log:\n    ssh:\n"
                                          "      host: 192.0.2.1\n      port: 2022\n      user: witness\n"
                                          "      identity_file: /etc/isoharness/witness_ed25519\n"
                                          "      host_key: \"" +
                                          key +
                                          "\"\n      path: /var/log/witness.log\n"
                                          "    timeout_s: 4\n",
                                      "w.yaml");
  REQUIRE(p.witness);
  REQUIRE(p.witness->log_ssh);
  CHECK(p.witness->log_ssh->host == "192.0.2.1");
  CHECK(p.witness->log_ssh->port == 2022);
  CHECK(p.witness->log_ssh->user == "witness");
  CHECK(p.witness->log_ssh->identity_file == "/etc/isoharness/witness_ed25519");
  CHECK(p.witness->log_ssh->host_key == key);
  CHECK(p.witness->log_ssh->path == "/var/log/witness.log");
  CHECK(p.witness->log_timeout_s == 4);
  CHECK(p.witness->log_host.empty());

  const auto ssh = [&](const std::string& fields, const std::string& more = "") {
    return witness_error("witness:\n  canary: 203.0.113.40\n  log:\n" + more + "    ssh:\n" + fields);
  };
  const std::string good =
      "      host: 192.0.2.1\n      user: witness\n      identity_file: /k\n      host_key: \"" + key +
      "\"\n      path: /w.log\n";
  CHECK(ssh(good).empty());
  // Each required key, missing: an error naming it, at the file's line.
  for (const std::string field : {"host", "user", "identity_file", "host_key", "path"}) {
    INFO(field);
    std::string fields = good;
    const auto at = fields.find("      " + field + ":");
    fields.erase(at, fields.find('\n', at) - at + 1);
    CHECK_THAT(ssh(fields),
               Catch::Contains("witness.log.ssh." + field + " is required") && Catch::Contains("w.yaml:"));
  }
  CHECK_THAT(ssh(good + "      port: 0\n"), Catch::Contains("witness.log.ssh.port must be"));
  CHECK_THAT(ssh(good + "      command: cat\n"), Catch::Contains("unknown key 'command'"));
  std::string rsa = good;
  rsa.replace(rsa.find("ssh-ed25519"), 11, "ssh-rsa");  // libssh2 here verifies no rsa-sha2
  CHECK_THAT(ssh(rsa), Catch::Contains("witness.log.ssh.host_key is required"));
  std::string named = good;
  named.replace(named.find("192.0.2.1"), 9, "log.example.com");
  CHECK_THAT(ssh(named), Catch::Contains("witness.log.ssh.host is required"));
  std::string relative = good;
  relative.replace(relative.find("/w.log"), 6, "w.log");
  CHECK_THAT(ssh(relative), Catch::Contains("witness.log.ssh.path is required"));
  CHECK_THAT(ssh(good, "    http: \"http://192.0.2.1/w\"\n"), Catch::Contains("exactly one of http"));
  CHECK_THAT(ssh(good, "    token_env: WITNESS_TOKEN\n"),
             Catch::Contains("takes no token_file or token_env"));
}

TEST_CASE("witness log read as a file: whole lines, its identity, a replaced or truncated one", "[hawk]") {
  const std::string head = "W1 1 ready - - 0 0011223344556677 -\nW1 2 heartbeat - - 0 - -\n";
  const std::string id = deploy::witness_log_id(head);
  auto f = deploy::raw_witness_frames(head, "W1 2 heartbeat - - 0 - -\nW1 3 udp", 36, 100, id);
  CHECK(f.problem.empty());
  CHECK_FALSE(f.replaced);
  CHECK(f.log_id == id);
  CHECK(f.lines == "W1 2 heartbeat - - 0 - -\n");  // the unfinished line waits
  CHECK(f.next_offset == 36 + 25);
  CHECK(deploy::raw_witness_frames(head, "W1 3 udp", 36, 100, id).lines.empty());
  auto other = deploy::raw_witness_frames("W1 9 ready - - 0 8899aabbccddeeff -\n", "W1 2 x\n", 36, 100, id);
  CHECK(other.replaced);
  CHECK(other.lines.empty());
  CHECK(deploy::raw_witness_frames(head, "", 500, 100, id).replaced);  // truncated below the offset
  CHECK_FALSE(deploy::raw_witness_frames(head, "", 0, 0, "").replaced);
}

TEST_CASE("witness cursor: catch_up reads until the log's end, within its byte bound", "[hawk]") {
  const std::string log = "W1 1 ready - - 0 0011223344556677 -\nW1 5 udp 192.0.2.9 203.0.113.40 53 00ff -\n";
  const std::string id = deploy::witness_log_id(log);
  std::vector<long long> asked;
  std::string served = log;
  const LogReader read = [&](long long from, const std::string& known, std::size_t) -> Expected<LogRead> {
    asked.push_back(from);
    const auto size = static_cast<long long>(served.size());
    const std::string bytes = from < size ? served.substr(static_cast<std::size_t>(from), 48) : "";
    return LogRead{deploy::raw_witness_frames(served, bytes, from, size, known), 4096};
  };
  WitnessLogCursor cursor;
  CHECK(catch_up(cursor, 1 << 20, read).empty());
  CHECK(cursor.offset == static_cast<long long>(log.size()));
  CHECK(cursor.log.records.size() == 1);
  CHECK(asked == std::vector<long long>{0, 36});  // 48 bytes a read: two reads
  // Another log at the same place: read from byte 0, once.
  served = "W1 7 ready - - 0 8899aabbccddeeff -\n";
  asked.clear();
  CHECK(catch_up(cursor, 1 << 20, read).empty());
  CHECK(asked == std::vector<long long>{static_cast<long long>(log.size()), 0});
  CHECK(cursor.log.records.empty());
  CHECK(cursor.restarts == 1);
  // A byte bound smaller than the log: not judged on.
  WitnessLogCursor fresh;
  served = log;
  CHECK_THAT(catch_up(fresh, 4096, read), Catch::Contains("further behind"));
  // A reader that fails: its reason.
  const LogReader broken = [](long long, const std::string&, std::size_t) -> Expected<LogRead> {
    return make_error("the witness log could not be read over SSH: refused");
  };
  CHECK_THAT(catch_up(fresh, 1 << 20, broken), Catch::Contains("over SSH: refused"));
}
