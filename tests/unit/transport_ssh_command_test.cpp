// parse_ssh_command: the variants a platform prints, and input that must be refused.
#include <catch2/catch.hpp>

#include "harness/transport/ssh_command.h"

using isoharness::transport::parse_ssh_command;

namespace {

std::string error_of(std::string_view command) {
  auto r = parse_ssh_command(command);
  REQUIRE_FALSE(r.has_value());
  return r.error().message;
}

}  // namespace

TEST_CASE("the command hawk prints becomes a route", "[transport]") {
  auto r = parse_ssh_command("ssh -J jumper@203.0.113.5 agent@192.0.2.77 -p 2222");
  REQUIRE(r.has_value());
  CHECK(r->jump.user == "jumper");
  CHECK(r->jump.host == "203.0.113.5");
  CHECK(r->jump.port == 22);
  CHECK(r->sandbox.user == "agent");
  CHECK(r->sandbox.host == "192.0.2.77");
  CHECK(r->sandbox.port == 2222);
  CHECK(r->jump.host_key.empty());
  CHECK(r->sandbox.host_key.empty());
}

TEST_CASE("usual variants of the ssh command", "[transport]") {
  SECTION("jump port, -p before the destination, trailing newline") {
    auto r = parse_ssh_command("ssh -J j@jump.example.com:2022 -p 2222 agent@sb-1.ns.svc\n");
    REQUIRE(r.has_value());
    CHECK(r->jump.port == 2022);
    CHECK(r->jump.host == "jump.example.com");
    CHECK(r->sandbox.host == "sb-1.ns.svc");
    CHECK(r->sandbox.port == 2222);
  }
  SECTION("attached option arguments, prompt and a path to ssh") {
    auto r = parse_ssh_command("$ /usr/bin/ssh -p2222 -Jj@h agent@sb");
    REQUIRE(r.has_value());
    CHECK(r->jump.user == "j");
    CHECK(r->jump.host == "h");
    CHECK(r->sandbox.port == 2222);
  }
  SECTION("-o ProxyJump, Port and User; other options skipped with their arguments") {
    auto r = parse_ssh_command(
        "ssh -tt -4A -o StrictHostKeyChecking=no -i ~/.ssh/id_ed25519 -o ProxyJump=j@h:22 -o Port=2222 "
        "-o User=agent sb");
    REQUIRE(r.has_value());
    CHECK(r->jump.host == "h");
    CHECK(r->sandbox.user == "agent");
    CHECK(r->sandbox.host == "sb");
    CHECK(r->sandbox.port == 2222);
  }
  SECTION("ssh:// URIs") {
    auto r = parse_ssh_command("ssh -J ssh://j@h:2200 ssh://agent@sb:2222");
    REQUIRE(r.has_value());
    CHECK(r->jump.port == 2200);
    CHECK(r->sandbox.port == 2222);
  }
  SECTION("IPv6 jumphost with a port, -l for the sandbox user") {
    auto r = parse_ssh_command("ssh -J j@[2001:db8::1]:2022 -l agent 2001:db8::7 -p 2222");
    REQUIRE(r.has_value());
    CHECK(r->jump.host == "2001:db8::1");
    CHECK(r->jump.port == 2022);
    CHECK(r->sandbox.host == "2001:db8::7");
    CHECK(r->sandbox.user == "agent");
  }
  SECTION("quoted words") {
    auto r = parse_ssh_command("ssh -J 'j@h' \"agent@sb\" -p '2222'");
    REQUIRE(r.has_value());
    CHECK(r->sandbox.port == 2222);
  }
  SECTION("no -p means ssh's default port") {
    auto r = parse_ssh_command("ssh -J j@h agent@sb");
    REQUIRE(r.has_value());
    CHECK(r->sandbox.port == 22);
  }
}

TEST_CASE("hostile or broken ssh commands are refused with a reason", "[transport]") {
  CHECK_THAT(error_of("ssh -J j@h agent@sb -p 2222; rm -rf /"), Catch::Contains("shell syntax ';'"));
  CHECK_THAT(error_of("ssh -J j@h agent@$(id) -p 2222"), Catch::Contains("shell syntax '$'"));
  CHECK_THAT(error_of("ssh -J j@h \"agent@`id`\" -p 2222"), Catch::Contains("refused"));
  CHECK_THAT(error_of("ssh -J j@h agent@sb -p 2222 | tee x"), Catch::Contains("shell syntax '|'"));
  CHECK_THAT(error_of(std::string("ssh -J j@h agent@sb\n-p 2222")), Catch::Contains("control character"));
  CHECK_THAT(error_of(std::string("ssh -J j@h agent@sb\0 -p 2222", 29)),
             Catch::Contains("control character"));
  CHECK_THAT(error_of("ssh -J j@h agent@sb -p 99999"), Catch::Contains("1 to 65535"));
  CHECK_THAT(error_of("ssh -J j@h agent@sb -p 22x"), Catch::Contains("port '22x'"));
  CHECK_THAT(error_of("ssh -J j@h:0 agent@sb"), Catch::Contains("jumphost"));
  CHECK_THAT(error_of("ssh agent@sb -p 2222"), Catch::Contains("no jumphost"));
  CHECK_THAT(error_of("ssh -J a@b,c@d agent@sb -p 2222"), Catch::Contains("several jump hops"));
  CHECK_THAT(error_of("ssh -J j@h agent@sb -p 2222 uname -a"),
             Catch::Contains("unexpected remote command 'uname'"));
  CHECK_THAT(error_of("ssh -J h agent@sb -p 2222"), Catch::Contains("jumphost 'h' has no user"));
  CHECK_THAT(error_of("ssh -J j@h sb -p 2222"), Catch::Contains("destination 'sb' has no user"));
  CHECK_THAT(error_of("ssh -J j@h agent@-oProxyCommand=x"), Catch::Contains("not a valid host"));
  CHECK_THAT(error_of("ssh -o ProxyCommand=nc -J j@h agent@sb"), Catch::Contains("ProxyCommand"));
  CHECK_THAT(error_of("ssh -J j@h agent@sb:2222"), Catch::Contains("use -p"));
  CHECK_THAT(error_of("ssh -J 'j@h agent@sb"), Catch::Contains("unterminated single quote"));
  CHECK_THAT(error_of("scp -J j@h agent@sb"), Catch::Contains("start with ssh"));
  CHECK_THAT(error_of("ssh -Z j@h agent@sb"), Catch::Contains("unknown option '-Z'"));
  CHECK_THAT(error_of("ssh -J"), Catch::Contains("-J needs an argument"));
  CHECK_THAT(error_of("ssh -J j@h -J k@h agent@sb"), Catch::Contains("twice"));
  CHECK_THAT(error_of("ssh -J j@h"), Catch::Contains("no destination"));
  CHECK_THAT(error_of("  "), Catch::Contains("empty"));
  CHECK_THAT(error_of("ssh -J 'bad user'@h agent@sb"), Catch::Contains("not a valid user"));
  CHECK_THAT(error_of(std::string(5000, 'a')), Catch::Contains("4096"));
}
