// transport's parse_ssh_line: the forms the hawk ssh-command contract allows, in any order,
// users taken the way OpenSSH takes them, terminal-only options ignored, and everything
// that changes where or how the connection goes refused by name.
#include <catch2/catch.hpp>

#include "harness/transport/ssh_line.h"

using isoharness::transport::parse_ssh_line;
using isoharness::transport::SshLineRules;

namespace {
std::string error_of(std::string_view text, SshLineRules rules = {}) {
  auto r = parse_ssh_line(text, rules);
  if (r) return "(accepted)";
  return r.error().message;
}
}  // namespace

TEST_CASE("ssh-command lines in every accepted form", "[transport]") {
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
               Catch::Contains("option '-F' is refused: it reads another ssh config"));
    auto r = parse_ssh_line("ssh -F /tmp/cfg -J j@h -p 2222 agent@sb", {.allow_config_file = true});
    REQUIRE(r.has_value());
    CHECK(r->config_file == "/tmp/cfg");
  }
}

TEST_CASE("ssh-command lines outside the contract are refused by name", "[transport]") {
  CHECK_THAT(error_of("no ssh here\n"), Catch::Contains("no line starting with 'ssh '"));
  CHECK_THAT(error_of(""), Catch::Contains("no line starting with 'ssh '"));
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

TEST_CASE("a host without a user gets one the way OpenSSH gives it", "[transport]") {
  const SshLineRules profile{.jump_user = "bastion", .sandbox_user = "agent", .local_user = "ops"};
  const SshLineRules local_only{.local_user = "ops"};
  SECTION("-J host: the profile's jumphost user, else the local user") {
    auto r = parse_ssh_line("ssh -J jump.example.com agent@sb", profile);
    REQUIRE(r.has_value());
    CHECK(r->route.jump.user == "bastion");
    CHECK(r->route.jump.host == "jump.example.com");
    CHECK(r->route.jump.port == 22);
    r = parse_ssh_line("ssh -J jump.example.com:2022 agent@sb", local_only);
    REQUIRE(r.has_value());
    CHECK(r->route.jump.user == "ops");
    CHECK(r->route.jump.port == 2022);
  }
  SECTION("a sandbox without user@ or -l: the profile's sandbox user, else the local user") {
    auto r = parse_ssh_line("ssh -J j@h -p 2222 sb.evals.svc", profile);
    REQUIRE(r.has_value());
    CHECK(r->route.sandbox.user == "agent");
    r = parse_ssh_line("ssh -J j@h sb.evals.svc", local_only);
    REQUIRE(r.has_value());
    CHECK(r->route.sandbox.user == "ops");
  }
  SECTION("what the line names wins over every default; -o User is the sandbox's, not the jumphost's") {
    auto r = parse_ssh_line("ssh -J j@h -l named sb", profile);
    REQUIRE(r.has_value());
    CHECK(r->route.sandbox.user == "named");
    CHECK(r->route.jump.user == "j");
    r = parse_ssh_line("ssh -o User=named -J h sb", profile);
    REQUIRE(r.has_value());
    CHECK(r->route.sandbox.user == "named");
    CHECK(r->route.jump.user == "bastion");
  }
  SECTION("no default at all: refused, naming the caller's setting where it has one") {
    const SshLineRules settings{.jump_user_setting = "hawk.jumphost_user",
                                .sandbox_user_setting = "hawk.sandbox_user"};
    CHECK_THAT(error_of("ssh -J h agent@sb", settings),
               Catch::Contains("no default user is known (hawk.jumphost_user)"));
    CHECK_THAT(error_of("ssh -J j@h sb", settings),
               Catch::Contains("no default user is known (hawk.sandbox_user)"));
    // A caller with no such setting is not told to set one.
    CHECK_THAT(error_of("ssh -J h agent@sb"), Catch::EndsWith("no default user is known"));
    CHECK_THAT(error_of("ssh -J j@h sb"), Catch::EndsWith("no default user is known"));
  }
  SECTION("the local user is the one this process runs as") {
    const std::string me = isoharness::transport::local_user_name();
    CHECK_FALSE(me.empty());
    auto r = parse_ssh_line("ssh -J h sb", {.local_user = me});
    REQUIRE(r.has_value());
    CHECK(r->route.jump.user == me);
    CHECK(r->route.sandbox.user == me);
  }
}

TEST_CASE("options that only shape the terminal or logging are accepted and ignored", "[transport]") {
  for (const char* line : {"ssh -t -J j@h agent@sb", "ssh -tt -J j@h agent@sb", "ssh -T -q -J j@h agent@sb",
                           "ssh -v -J j@h agent@sb", "ssh -vvv -J j@h -p 2222 agent@sb -t",
                           "ssh -qtv -J j@h agent@sb", "ssh -tJ j@h agent@sb", "ssh -J j@h -vp22 agent@sb"}) {
    INFO(line);
    auto r = parse_ssh_line(line);
    REQUIRE(r.has_value());
    CHECK(r->route.jump.host == "h");
    CHECK(r->route.sandbox.host == "sb");
    CHECK(r->options.empty());
  }
}

TEST_CASE("anything that changes where or how the connection goes is refused by name", "[transport]") {
  const SshLineRules rules{.local_user = "ops"};
  auto refused = [&](const std::string& line) { return error_of(line, rules); };
  CHECK_THAT(refused("ssh -J j@h -L 8080:127.0.0.1:80 agent@sb"),
             Catch::Contains("option '-L' is refused: it forwards"));
  CHECK_THAT(refused("ssh -J j@h -R 9000:localhost:22 agent@sb"), Catch::Contains("option '-R'"));
  CHECK_THAT(refused("ssh -J j@h -D 1080 agent@sb"), Catch::Contains("option '-D'"));
  CHECK_THAT(refused("ssh -J j@h -W sb:22 agent@sb"), Catch::Contains("option '-W'"));
  CHECK_THAT(refused("ssh -J j@h -F /tmp/evil agent@sb"),
             Catch::Contains("option '-F' is refused: it reads another ssh config"));
  CHECK_THAT(refused("ssh -J j@h -w 0:0 agent@sb"), Catch::Contains("option '-w'"));
  CHECK_THAT(refused("ssh -J j@h -A agent@sb"),
             Catch::Contains("option '-A' is refused: it forwards the agent"));
  CHECK_THAT(refused("ssh -J j@h -X agent@sb"), Catch::Contains("option '-X'"));
  CHECK_THAT(refused("ssh -J j@h -S /tmp/ctl agent@sb"), Catch::Contains("option '-S'"));
  CHECK_THAT(refused("ssh -J j@h -N agent@sb"), Catch::Contains("option '-N'"));
  CHECK_THAT(refused("ssh -J j@h -tL 80:x:80 agent@sb"),
             Catch::Contains("option '-L'"));  // hidden in a bundle
  CHECK_THAT(refused("ssh -J j@h -vvvD1080 agent@sb"), Catch::Contains("option '-D'"));
  CHECK_THAT(refused("ssh -J j@h -o 'ProxyCommand=nc %h %p' agent@sb"),
             Catch::Contains("-o ProxyCommand is refused: it changes where or how the connection goes"));
  for (const char* key :
       {"HostName=203.0.113.9", "proxycommand=x", "LocalForward=80 x:80", "RemoteForward=1 x:1",
        "DynamicForward=1080", "ForwardAgent=yes", "Tunnel=yes", "ControlPath=/tmp/c", "ControlMaster=auto",
        "KnownHostsCommand=/bin/x", "RemoteCommand=id", "Include=/tmp/x", "BindAddress=127.0.0.2",
        "ProxyUseFdpass=yes", "PermitLocalCommand=yes"}) {
    INFO(key);
    CHECK_THAT(refused("ssh -J j@h -o '" + std::string(key) + "' agent@sb"), Catch::Contains("is refused"));
  }
  // What only looks at host keys or timing is not a route: accepted (the harness pins keys itself).
  CHECK(refused(
            "ssh -J j@h -o StrictHostKeyChecking=no -o ServerAliveInterval=30 -o LogLevel=ERROR agent@sb") ==
        "(accepted)");
}
