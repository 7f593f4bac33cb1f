// parse_ssh_line: the forms the hawk ssh-command contract allows, in any order, and
// everything else refused by name.
#include <catch2/catch.hpp>

#include "harness/deploy/hawk/ssh_line.h"

using isoharness::deploy::hawk::parse_ssh_line;
using isoharness::deploy::hawk::SshLineRules;

namespace {
std::string error_of(std::string_view text, SshLineRules rules = {}) {
  auto r = parse_ssh_line(text, rules);
  if (r) return "(accepted)";
  return r.error().message;
}
}  // namespace

TEST_CASE("ssh-command lines in every accepted form", "[hawk]") {
  SECTION("the line among others, -J with user and port, -p, -i") {
    auto r = parse_ssh_line(
        "Waiting for the sandbox...\nReady.\n  ssh -J baseliner@jump.example.com:2022 -p 2222 "
        "-i ~/.ssh/id_ed25519 agent@192.0.2.77\nhave fun\n");
    REQUIRE(r.has_value());
    CHECK(r->route.jump.user == "baseliner");
    CHECK(r->route.jump.host == "jump.example.com");
    CHECK(r->route.jump.port == 2022);
    CHECK(r->route.sandbox.user == "agent");
    CHECK(r->route.sandbox.host == "192.0.2.77");
    CHECK(r->route.sandbox.port == 2222);
    CHECK(r->identity_file == "~/.ssh/id_ed25519");
  }
  SECTION("any order, attached arguments, -o both ways, -l for the user") {
    auto r = parse_ssh_line(
        "ssh sb-1.evals.svc -oStrictHostKeyChecking=no -l agent -p2222 -o "
        "UserKnownHostsFile=/tmp/kh -Jj@203.0.113.5 -iKEY");
    REQUIRE(r.has_value());
    CHECK(r->route.jump.port == 22);
    CHECK(r->route.jump.host == "203.0.113.5");
    CHECK(r->route.sandbox.user == "agent");
    CHECK(r->route.sandbox.host == "sb-1.evals.svc");
    CHECK(r->route.sandbox.port == 2222);
    CHECK(r->identity_file == "KEY");
    CHECK(r->known_hosts == "/tmp/kh");
    REQUIRE(r->options.size() == 2);
    CHECK(r->options[0].first == "StrictHostKeyChecking");
  }
  SECTION("user@host wins over -l, -o Port / User / ProxyJump / IdentityFile") {
    auto r = parse_ssh_line("ssh -l other -o ProxyJump=j@h -o Port=2222 -o IdentityFile=/k agent@sb");
    REQUIRE(r.has_value());
    CHECK(r->route.sandbox.user == "agent");
    CHECK(r->route.sandbox.port == 2222);
    CHECK(r->route.jump.host == "h");
    CHECK(r->identity_file == "/k");
  }
  SECTION("no -p: ssh's port 22") {
    auto r = parse_ssh_line("ssh -J j@h agent@sb");
    REQUIRE(r.has_value());
    CHECK(r->route.sandbox.port == 22);
  }
  SECTION("-F only where allowed (isoharness check, for `local up`'s line)") {
    CHECK_THAT(error_of("ssh -F /tmp/cfg -J j@h agent@sb"),
               Catch::Contains("option '-F' is not part of the contract"));
    auto r = parse_ssh_line("ssh -F /tmp/cfg -J j@h -p 2222 agent@sb", {.allow_config_file = true});
    REQUIRE(r.has_value());
    CHECK(r->config_file == "/tmp/cfg");
  }
}

TEST_CASE("ssh-command lines outside the contract are refused by name", "[hawk]") {
  CHECK_THAT(error_of("no ssh here\n"), Catch::Contains("no line starting with 'ssh '"));
  CHECK_THAT(error_of(""), Catch::Contains("no line starting with 'ssh '"));
  CHECK_THAT(error_of("ssh -tt -J j@h agent@sb"), Catch::Contains("option '-t'"));
  CHECK_THAT(error_of("ssh -A -J j@h agent@sb"), Catch::Contains("option '-A'"));
  CHECK_THAT(error_of("ssh -L 80:x:80 -J j@h agent@sb"), Catch::Contains("option '-L'"));
  CHECK_THAT(error_of("ssh -J j@h agent@sb -- id"), Catch::Contains("option '--'"));
  CHECK_THAT(error_of("ssh -J j@h agent@sb uname -a"), Catch::Contains("unexpected word 'uname'"));
  CHECK_THAT(error_of("ssh -o ProxyCommand=nc -J j@h agent@sb"), Catch::Contains("ProxyCommand is refused"));
  CHECK_THAT(error_of("ssh -o LocalCommand=x -J j@h agent@sb"), Catch::Contains("LocalCommand is refused"));
  CHECK_THAT(error_of("ssh -o Compression -J j@h agent@sb"), Catch::Contains("expected KEY=VALUE"));
  CHECK_THAT(error_of("ssh -J j@h -o ProxyJump=k@h agent@sb"), Catch::Contains("given twice"));
  CHECK_THAT(error_of("ssh -J a@b,c@d agent@sb"), Catch::Contains("several jump hops"));
  CHECK_THAT(error_of("ssh agent@sb -p 2222"), Catch::Contains("no jumphost"));
  CHECK_THAT(error_of("ssh -J j@h -p 2222"), Catch::Contains("no destination"));
  CHECK_THAT(error_of("ssh -J h agent@sb"), Catch::Contains("jumphost 'h' names no user"));
  CHECK_THAT(error_of("ssh -J j@h sb"), Catch::Contains("names no user"));
  CHECK_THAT(error_of("ssh -J j@h agent@sb -p 70000"), Catch::Contains("1 to 65535"));
  CHECK_THAT(error_of("ssh -J j@h agent@sb -p"), Catch::Contains("-p needs an argument"));
  CHECK_THAT(error_of("ssh -J j@h -l 'bad user' sb"), Catch::Contains("not a valid user name"));
  CHECK_THAT(error_of("ssh -J j@h -i -oops agent@sb"), Catch::Contains("not a file name"));
  CHECK_THAT(error_of("ssh -J j@h agent@sb; rm -rf /"), Catch::Contains("shell syntax ';'"));
  CHECK_THAT(error_of("ssh -J j@h agent@$(id)"), Catch::Contains("shell syntax '$'"));
  CHECK_THAT(error_of("ssh -J j@h agent@sb | tee x"), Catch::Contains("shell syntax '|'"));
  CHECK_THAT(error_of("ssh -J j@h 'agent@sb"), Catch::Contains("unterminated"));
  CHECK_THAT(error_of("ssh -J j@h agent@-oProxyCommand=x"), Catch::Contains("not a valid host"));
  CHECK_THAT(error_of(std::string("ssh -J j@h agent@sb\x1b[2J")), Catch::Contains("control character"));
  CHECK_THAT(error_of("ssh -J j@h " + std::string(5000, 'a')), Catch::Contains("longer than 4096"));
  CHECK_THAT(error_of(std::string(70000, '\n')), Catch::Contains("64 KiB"));
}
