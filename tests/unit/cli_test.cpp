// The CLI's shared sandbox flags, and the command line every sandbox command records in
// result.json's run.argv (docs/CONTRACTS.md §5). The end-to-end cases run the built binary
// against things that fail at once and harmlessly (a hawk CLI that does not exist, a
// jumphost on a closed loopback port): each command still writes its result.json.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "harness/cli/commands.h"
#include "harness/common/error.h"
#include "harness/common/subprocess.h"
#include "tests/support/test_support.h"

using namespace isoharness;
using nlohmann::json;

namespace {

std::string binary() {
  return test::binary_dir() + "/harness/cli/isoharness";
}

// Parses `args` (after the program name and the subcommand) into a fresh SandboxCommand.
runner::SandboxCommand parse_shared(const std::vector<std::string>& args,
                                    cli::BackendFlag backend = cli::BackendFlag::choose) {
  CLI::App app{"test"};
  CLI::App* sub = app.add_subcommand("cmd");
  cli::CommandLine line = {"isoharness", "cmd"};
  line.insert(line.end(), args.begin(), args.end());
  runner::SandboxCommand command;
  cli::add_sandbox_options(sub, command, line, backend);
  std::vector<std::string> reversed(line.rbegin(), line.rend() - 1);  // CLI11 takes them backwards
  app.parse(reversed);
  return command;
}

// A copy of the example hawk profile whose CLI does not exist: the run's login pre-flight
// fails before anything is asked of a platform, and the command still writes its result.
std::string hawk_profile_without_cli(const test::TempDir& dir) {
  std::string text = test::read_text(test::source_dir() + "/scenarios/deployments/staging.example.yaml");
  text = std::regex_replace(text, std::regex("\n  cli: hawk[^\n]*"), "\n  cli: /nonexistent/hawk");
  REQUIRE(text.find("/nonexistent/hawk") != std::string::npos);
  std::string path = dir.str() + "/hawk.yaml";
  std::ofstream(path) << text;
  return path;
}

// The first item id of a scenario's plan, as `plan --format json` prints it.
std::string first_item(const std::string& scenario) {
  RunOptions o;
  o.cwd = test::source_dir();
  o.deadline = std::chrono::seconds(30);
  auto r = run_command({binary(), "plan", scenario, "--format", "json"}, o);
  REQUIRE(r.has_value());
  REQUIRE(r->exit_code == kExitPass);
  const json plan = json::parse(r->out);
  REQUIRE(!plan["items"].empty());
  return plan["items"][0]["id"].get<std::string>();
}

// Runs the binary with `args`; returns the run.argv of the result.json it wrote in `out`.
json recorded_argv(const std::vector<std::string>& args, const std::string& out) {
  std::vector<std::string> argv = {binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions o;
  o.cwd = test::source_dir();
  o.deadline = std::chrono::seconds(60);
  o.env_set["NO_COLOR"] = "1";
  auto r = run_command(argv, o);
  REQUIRE(r.has_value());
  INFO(r->out << r->err);
  CHECK(r->exit_code == kExitInfrastructure);  // what was asked of it cannot work
  const json result = json::parse(test::read_text(out + "/result.json"));
  return result["run"]["argv"];
}

}  // namespace

TEST_CASE("cli: the shared sandbox flags fill the command's SandboxCommand and keep the command line",
          "[cli]") {
  const auto c = parse_shared({"--backend", "hawk", "--deployment", "d.yaml", "--scenarios-dir", "s", "--out",
                               "o", "--isoprobe-bundle", "b", "--accept-new-host-keys"});
  CHECK(c.backend == scenario::BackendKind::hawk);
  CHECK(c.deployment_path == "d.yaml");
  CHECK(c.scenarios_dir == "s");
  CHECK(c.out_dir == "o");
  CHECK(c.isoprobe_bundle == "b");
  CHECK(c.accept_new_host_keys);
  CHECK(c.argv == std::vector<std::string>{"isoharness", "cmd", "--backend", "hawk", "--deployment", "d.yaml",
                                           "--scenarios-dir", "s", "--out", "o", "--isoprobe-bundle", "b",
                                           "--accept-new-host-keys"});

  const auto defaults = parse_shared({});
  CHECK(defaults.backend == scenario::BackendKind::local);
  CHECK(defaults.out_dir == "out");
  CHECK_FALSE(defaults.accept_new_host_keys);
  CHECK(defaults.argv == std::vector<std::string>{"isoharness", "cmd"});

  // A command that reaches a sandbox already running has no --backend to choose.
  CHECK(parse_shared({}, cli::BackendFlag::existing).backend ==
        scenario::BackendKind::local);  // the struct's; check sets its own
  CHECK_THROWS_AS(parse_shared({"--backend", "hawk"}, cli::BackendFlag::existing), CLI::ParseError);
  // Only the backends that deploy can be chosen; a name is taken as written.
  CHECK_THROWS_AS(parse_shared({"--backend", "existing"}), CLI::ParseError);
  CHECK_THROWS_AS(parse_shared({"--backend", "kata"}), CLI::ParseError);
  CHECK_THROWS_AS(parse_shared({"--backend", "0"}), CLI::ParseError);
}

TEST_CASE("cli: run, parity and check record their command line as result.json's run.argv", "[cli]") {
  test::TempDir dir("ih-cli-argv");
  const std::string profile = hawk_profile_without_cli(dir);

  SECTION("run") {
    const std::vector<std::string> args = {"run",   "scenarios/strict.yaml", "--backend",
                                           "hawk",  "--deployment",          profile,
                                           "--out", dir.str() + "/run",      "--accept-new-host-keys"};
    std::vector<std::string> expected = {binary()};
    expected.insert(expected.end(), args.begin(), args.end());
    CHECK(recorded_argv(args, dir.str() + "/run") == expected);
  }
  SECTION("parity") {
    const std::vector<std::string> args = {"parity",
                                           "--backend",
                                           "hawk",
                                           "--deployment",
                                           profile,
                                           "--out",
                                           dir.str() + "/parity",
                                           "--quick",
                                           "--baseline",
                                           "gvisor/tier",
                                           "--candidate",
                                           "gvisor/tier",
                                           "--accept-new-host-keys"};
    std::vector<std::string> expected = {binary()};
    expected.insert(expected.end(), args.begin(), args.end());
    CHECK(recorded_argv(args, dir.str() + "/parity") == expected);
  }
  SECTION("check") {
    // Nothing listens on loopback port 1: the jump connection is refused at once.
    const std::string item = first_item("scenarios/strict.yaml");
    const std::vector<std::string> args = {"check",
                                           "scenarios/strict.yaml",
                                           "--item",
                                           item,
                                           "--ssh",
                                           "ssh -J root@127.0.0.1:1 root@127.0.0.1",
                                           "--identity",
                                           dir.str() + "/no-such-key",
                                           "--accept-new-host-keys",
                                           "--out",
                                           dir.str() + "/check"};
    std::vector<std::string> expected = {binary()};
    expected.insert(expected.end(), args.begin(), args.end());
    CHECK(recorded_argv(args, dir.str() + "/check") == expected);
  }
}

namespace {

// Runs the binary with `args` from the source tree; what it printed is in the result.
RunResult run_binary(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions o;
  o.cwd = test::source_dir();
  o.deadline = std::chrono::seconds(60);
  o.env_set["NO_COLOR"] = "1";
  auto r = run_command(argv, o);
  REQUIRE(r.has_value());
  return *r;
}

// The report files a command wrote besides result.json: SARIF that is SARIF 2.1.0 JSON,
// OpenMetrics text that the OpenMetrics parser reads, and report.html.
void check_report_files(const std::string& out, const std::string& sarif, const std::string& metrics) {
  CHECK(test::read_text(out + "/report.html").starts_with("<!DOCTYPE html>"));
  const json log = json::parse(test::read_text(sarif));
  CHECK(log["version"] == "2.1.0");
  CHECK(log["runs"][0]["tool"]["driver"]["name"] == "isoharness");
  CHECK(test::read_text(metrics).ends_with("# EOF\n"));
  RunOptions o;
  o.deadline = std::chrono::seconds(60);
  auto parsed = run_command(
      {"/usr/bin/python3", test::source_dir() + "/tests/unit/report_formats.py", "metrics", metrics}, o);
  REQUIRE(parsed.has_value());
  INFO("parser: " << parsed->err);
  CHECK(parsed->ok());
  CHECK(parsed->out.find("\"family\": \"isoharness_verdict\"") !=
        std::string::npos);  // a run with no check has one too
}

}  // namespace

TEST_CASE("cli: run and check write SARIF, metrics and report.html's previous run where their flags say",
          "[cli]") {
  test::TempDir dir("ih-cli-reports");
  const std::string profile = hawk_profile_without_cli(dir), d = dir.str();
  const std::vector<std::string> run = {"run",   "scenarios/strict.yaml", "--backend", "hawk", "--deployment",
                                        profile, "--accept-new-host-keys"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = run;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  auto first =
      run_binary(with({"--out", d + "/r1", "--sarif", d + "/r1.sarif", "--metrics", d + "/r1.prom"}));
  INFO(first.out << first.err);
  CHECK(first.exit_code == kExitInfrastructure);
  check_report_files(d + "/r1", d + "/r1.sarif", d + "/r1.prom");
  const json r1 = json::parse(test::read_text(d + "/r1/result.json"));
  const std::string compared = "compared with run <code>" + r1["run"]["id"].get<std::string>() + "</code>";
  CHECK(test::read_text(d + "/r1/report.html").find("id=\"since\"") == std::string::npos);

  SECTION("--previous names the earlier result") {
    auto second = run_binary(with({"--out", d + "/r2", "--previous", d + "/r1/result.json"}));
    CHECK(second.exit_code == kExitInfrastructure);
    CHECK(test::read_text(d + "/r2/report.html").find(compared) != std::string::npos);
  }
  SECTION("--history finds it") {
    auto recorded = run_binary({"history", "--db", d + "/h.sqlite", "record", d + "/r1/result.json"});
    INFO(recorded.out << recorded.err);
    REQUIRE(recorded.exit_code == kExitPass);
    auto second = run_binary(with({"--out", d + "/r2", "--history", d + "/h.sqlite"}));
    CHECK(second.exit_code == kExitInfrastructure);
    CHECK(test::read_text(d + "/r2/report.html").find(compared) != std::string::npos);
  }
  SECTION("not both") {
    auto both =
        run_binary(with({"--out", d + "/r2", "--previous", d + "/r1/result.json", "--history", d + "/h"}));
    CHECK(both.exit_code == kExitBadInput);
    CHECK_FALSE(std::filesystem::exists(d + "/r2/result.json"));
  }
  SECTION("check takes the same flags") {
    const std::string item = first_item("scenarios/strict.yaml");
    auto checked = run_binary({"check", "scenarios/strict.yaml", "--item", item, "--ssh",
                               "ssh -J root@127.0.0.1:1 root@127.0.0.1", "--identity", d + "/no-such-key",
                               "--accept-new-host-keys", "--out", d + "/c", "--sarif", d + "/c.sarif",
                               "--metrics", d + "/c.prom", "--previous", d + "/r1/result.json"});
    INFO(checked.out << checked.err);
    CHECK(checked.exit_code == kExitInfrastructure);
    check_report_files(d + "/c", d + "/c.sarif", d + "/c.prom");
  }
}
