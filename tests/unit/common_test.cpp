#include <catch2/catch.hpp>

#include "harness/common/error.h"
#include "harness/common/subprocess.h"

using namespace isoharness;
using namespace std::chrono_literals;

TEST_CASE("run_command captures output and exit code", "[common]") {
  auto r = run_command({"sh", "-c", "echo out; echo err >&2; exit 3"});
  REQUIRE(r.has_value());
  CHECK(r->exited);
  CHECK(r->exit_code == 3);
  CHECK(r->out == "out\n");
  CHECK(r->err == "err\n");
  CHECK(r->describe() == "exit 3: err");
}

TEST_CASE("run_command enforces its deadline", "[common]") {
  auto start = std::chrono::steady_clock::now();
  auto r = run_command({"sleep", "30"}, RunOptions{.deadline = 200ms});
  REQUIRE(r.has_value());
  CHECK(r->timed_out);
  CHECK_FALSE(r->ok());
  CHECK(std::chrono::steady_clock::now() - start < 5s);
}

TEST_CASE("run_command bounds what it keeps", "[common]") {
  auto r = run_command({"head", "-c", "100000", "/dev/zero"}, RunOptions{.max_output = 1000});
  REQUIRE(r.has_value());
  CHECK(r->out.size() == 1000);
  CHECK(r->out_truncated);
}

TEST_CASE("run_command feeds stdin and never uses a shell", "[common]") {
  auto r = run_command({"cat"}, RunOptions{.stdin_data = std::string("a; rm -rf /tmp/x $(id)")});
  REQUIRE(r.has_value());
  CHECK(r->out == "a; rm -rf /tmp/x $(id)");
  auto missing = run_command({"/nonexistent/program"});
  CHECK_FALSE(missing.has_value());
}

TEST_CASE("shell_quote survives hostile words", "[common]") {
  CHECK(shell_quote("plain-word_1.2") == "plain-word_1.2");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("it's; $(x)") == "'it'\\''s; $(x)'");
  auto r = run_command({"sh", "-c", "printf '%s|' " + shell_join({"a b", "it's", "$(id)", ""})});
  REQUIRE(r.has_value());
  CHECK(r->out == "a b|it's|$(id)||");
}

TEST_CASE("diagnostics name file, line, item", "[common]") {
  Diagnostic d{"s.yaml", 4, 7, "tasks[0].items[1] (bridge)", "level below the eval set's"};
  CHECK(d.to_string() == "s.yaml:4:7: tasks[0].items[1] (bridge): level below the eval set's");
  UserError e(std::vector<Diagnostic>{d, Diagnostic{"s.yaml", 9, 0, "", "second"}});
  CHECK(std::string(e.what()) == d.to_string() + "\ns.yaml:9: second");
}
