// The ClientHello builder and the two identity readers the world's name-checking proxy
// uses (SNI, Host), and the allow-list pattern match.
#include <catch2/catch.hpp>

#include "probes/core/target_spec.h"
#include "probes/core/tls_hello.h"

using namespace isoprobe;

namespace {

std::array<std::uint8_t, 32> some_random() {
  std::array<std::uint8_t, 32> r{};
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<std::uint8_t>(i * 7 + 1);
  return r;
}

std::size_t be16(const std::string& s, std::size_t at) {
  return (static_cast<std::uint8_t>(s[at]) << 8) | static_cast<std::uint8_t>(s[at + 1]);
}

}  // namespace

TEST_CASE("ClientHello: one handshake record whose lengths add up, naming the server", "[probe]") {
  const std::string hello = build_client_hello("Target.Example.com", some_random());
  REQUIRE(hello.size() > 60);
  CHECK(static_cast<std::uint8_t>(hello[0]) == 0x16);  // handshake record
  CHECK(be16(hello, 1) == 0x0301);
  CHECK(be16(hello, 3) == hello.size() - 5);           // record length
  CHECK(static_cast<std::uint8_t>(hello[5]) == 0x01);  // client_hello
  const std::size_t hs_len = (static_cast<std::uint8_t>(hello[6]) << 16) | be16(hello, 7);
  CHECK(hs_len == hello.size() - 9);
  CHECK(be16(hello, 9) == 0x0303);
  CHECK(hello.find("Target.Example.com") != std::string::npos);
  const auto sni = peek_client_hello_sni(hello);
  CHECK(sni.status == PeekStatus::found);
  CHECK(sni.name == "target.example.com");
  // Every shorter prefix asks for more bytes, never guesses.
  for (std::size_t n = 0; n < hello.size(); ++n) {
    INFO("prefix " << n);
    CHECK(peek_client_hello_sni(std::string_view(hello).substr(0, n)).status == PeekStatus::need_more);
  }
}

TEST_CASE("ClientHello reader: no SNI, not TLS, broken lengths", "[probe]") {
  CHECK(peek_client_hello_sni(build_client_hello("", some_random())).status == PeekStatus::absent);
  CHECK(peek_client_hello_sni("GET / HTTP/1.1\r\n").status == PeekStatus::not_this_protocol);
  CHECK(peek_client_hello_sni(std::string("\x16\x02\x00\x00\x10", 5)).status ==
        PeekStatus::not_this_protocol);
  std::string hello = build_client_hello("a.example.com", some_random());
  hello[5] = 0x02;  // a ServerHello, not a ClientHello
  CHECK(peek_client_hello_sni(hello).status == PeekStatus::not_this_protocol);
  std::string inflated = build_client_hello("a.example.com", some_random());
  inflated[8] = static_cast<char>(0xff);  // handshake longer than its record
  CHECK(peek_client_hello_sni(inflated).status == PeekStatus::not_this_protocol);
}

TEST_CASE("HTTP Host reader", "[probe]") {
  auto host = [](std::string_view head) { return peek_http_host(head); };
  CHECK(host("GET / HTTP/1.0\r\nhost: Target.Example.com:80\r\nUser-Agent: x\r\n\r\n").name ==
        "target.example.com");
  CHECK(host("GET / HTTP/1.1\r\nHost:  forbidden.example.net \r\n\r\n").status == PeekStatus::found);
  CHECK(host("GET / HTTP/1.1\r\nHost: a.b\r\n").status == PeekStatus::need_more);
  CHECK(host("GET / HTTP/1.0\r\nAccept: */*\r\n\r\n").status == PeekStatus::absent);
  CHECK(host("\x16\x03\x01\x00\x10 and so on, not a request").status == PeekStatus::not_this_protocol);
  CHECK(host("GET / SPDY/9\r\nHost: a.b\r\n\r\n").status == PeekStatus::not_this_protocol);
  CHECK(host(std::string("GET / HTTP/1.1\r\n") + std::string(9000, 'x')).status ==
        PeekStatus::not_this_protocol);
}

TEST_CASE("allow-list patterns as the chart writes them", "[probe]") {
  CHECK(allow_pattern_matches("target.example.com", "TARGET.example.com."));
  CHECK_FALSE(allow_pattern_matches("target.example.com", "forbidden.example.net"));
  CHECK(allow_pattern_matches("*.example.com", "a.b.example.com"));
  CHECK_FALSE(allow_pattern_matches("*.example.com", "example.com"));
  CHECK_FALSE(allow_pattern_matches("*.example.com", "evil-example.com"));
  CHECK(allow_pattern_matches("*", "anything.test"));
  CHECK_FALSE(allow_pattern_matches("target.example.com", ""));
}

TEST_CASE("--target name-scoped and metadata forms", "[probe]") {
  std::string err;
  auto tls = parse_target_spec("sni=target.example.com:443/tls@forbidden.example.net", &err);
  REQUIRE(tls);
  CHECK(tls->proto == TargetProto::tls);
  CHECK(tls->host == "target.example.com");
  CHECK(tls->server_name == "forbidden.example.net");
  CHECK(tls->presented_name() == "forbidden.example.net");
  auto plain = parse_target_spec("t=target.example.com:443/tls", &err);
  REQUIRE(plain);
  CHECK(plain->presented_name() == "target.example.com");
  auto google = parse_target_spec("m=169.254.169.254:80/http-google", &err);
  REQUIRE(google);
  CHECK(google->proto == TargetProto::http_google);
  CHECK(is_http(google->proto));
  REQUIRE(parse_target_spec("m=169.254.169.254:80/http-imds-token", &err));
  CHECK_FALSE(parse_target_spec("u=203.0.113.10:53/udp@x.example", &err));
  CHECK(err.find("@SERVERNAME goes with tls") != std::string::npos);
  CHECK_FALSE(parse_target_spec("t=203.0.113.10:22@x.example", &err));
  CHECK_FALSE(parse_target_spec("t=203.0.113.10:443/tls@not a name", &err));
  CHECK(err.find("valid DNS name") != std::string::npos);
}
