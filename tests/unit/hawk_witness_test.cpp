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
  TinyServer(std::string reply, int answers, std::chrono::milliseconds hold = 0ms) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 4) == 0);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    thread = std::thread([this, reply = std::move(reply), answers, hold] {
      for (int i = 0; i < answers; ++i) {
        const int c = ::accept(fd, nullptr, nullptr);
        if (c < 0) return;
        char buf[2048];
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n > 0) request.assign(buf, static_cast<std::size_t>(n));
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
  log: { http: "http://jumphost:8053/witness.log", max_bytes: 65536, timeout_s: 5 }
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
  CHECK_FALSE(scenario::parse_deployment(kBase, "w.yaml").witness);

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
  log: { http: "http://192.0.2.1:8053/witness.log" }
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
  TinyServer server("HTTP/1.0 200 OK\r\n\r\n" + log, 1);
  auto p = scenario::parse_deployment(
      kBase + "witness: { canary: 203.0.113.40, settle_ms: 0, log: { timeout_s: 1, http: \"http://jumphost:" +
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

  h.route.jump.host = "127.0.0.1";
  auto gone = backend.witness(h, "0123456789abcdef", now - 1s, now + 1s);  // the server answered once only
  REQUIRE(gone);
  CHECK_FALSE(gone->complete);
  CHECK_THAT(gone->note, Catch::Contains("could not be read"));
  CHECK_FALSE(HawkBackend(scenario::parse_deployment(kBase, "w.yaml"), o).witness(h, "", now, now));
  // A route that names the sandbox by a name: only the nonce ties records to it.
  deploy::WitnessLog hostile =
      deploy::parse_witness_log("W1 5 ready - - 0 - -\nW1 6 tcp-syn - 203.0.113.40 443 - -\n");
  CHECK(deploy::select_witness_records(hostile, "", "", "", 0, 10).records.empty());
  std::filesystem::remove_all(dir);
}
