// `isoharness node-view`, the node agent: its --container values, where it asks each
// runtime, and its exit codes on the built binary (2 bad input, 3 a container no runtime's
// state knows).
#include <catch2/catch.hpp>
#include <filesystem>

#include "harness/cli/commands.h"
#include "harness/common/error.h"
#include "harness/common/subprocess.h"
#include "tests/support/test_support.h"

using namespace isoharness;

namespace {

RunResult node_view(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {test::binary_dir() + "/harness/cli/isoharness", "node-view"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_command(argv, {.deadline = std::chrono::seconds(60)});
  REQUIRE(r.has_value());
  return *r;
}

}  // namespace

TEST_CASE("node-view: the first container is the agent's, every further one names its service", "[cli]") {
  auto t = cli::node_view_targets({"ih-abc-x.c", "scorer=ih-abc-x-scorer.c"});
  REQUIRE(t.size() == 2);
  CHECK(t[0].service == "default");
  CHECK(t[0].id == "ih-abc-x.c");
  CHECK(t[1].service == "scorer");
  CHECK(t[1].id == "ih-abc-x-scorer.c");
  CHECK(cli::node_view_targets({"default=abc"}).front().id == "abc");

  CHECK_THROWS_AS(cli::node_view_targets({}), UserError);
  CHECK_THROWS_WITH(cli::node_view_targets({"a", "b"}), Catch::Contains("name the service"));
  CHECK_THROWS_WITH(cli::node_view_targets({"scorer=a"}), Catch::Contains("agent's"));
  CHECK_THROWS_WITH(cli::node_view_targets({"-a"}), Catch::Contains("not a container id"));
  CHECK_THROWS_WITH(cli::node_view_targets({"a/../b"}), Catch::Contains("not a container id"));
  CHECK_THROWS_WITH(cli::node_view_targets({"a b"}), Catch::Contains("not a container id"));
  CHECK_THROWS_WITH(cli::node_view_targets({""}), Catch::Contains("not a container id"));
  CHECK_THROWS_WITH(cli::node_view_targets({"a", "x y=b"}), Catch::Contains("not a service name"));
  CHECK_THROWS_WITH(cli::node_view_targets({"a", "s=a"}), Catch::Contains("named twice"));
  CHECK_THROWS_WITH(cli::node_view_targets({"a", "default=b"}), Catch::Contains("named twice"));
  CHECK_THROWS_WITH(cli::node_view_targets(std::vector<std::string>(65, "a")), Catch::Contains("at most 64"));
}

TEST_CASE("node-view: asks --runtime-root alone, else every run's roots and then the runtime's default",
          "[cli]") {
  const cli::NodeViewTarget t{"default", "ih-abc-x.c"};
  auto only = cli::node_view_candidates(t, "runc", "/run/other", "/nonexistent");
  REQUIRE(only.size() == 1);
  CHECK(only[0].runc_root == "/run/other");
  CHECK(only[0].runsc_root.empty());  // --runtime runc: runsc is not asked
  CHECK(only[0].id == "ih-abc-x.c");
  CHECK(only[0].service == "default");
  auto both = cli::node_view_candidates(t, "", "/run/other", "/nonexistent");
  REQUIRE(both.size() == 1);
  CHECK(both[0].runc_root == "/run/other");
  CHECK(both[0].runsc_root == "/run/other");

  test::TempDir state;
  std::filesystem::create_directories(state.path / "abc");
  std::filesystem::create_directories(state.path / "NotARun");
  auto found = cli::node_view_candidates(t, "runsc", "", state.str());
  REQUIRE(found.size() == 2);
  CHECK(found[0].runsc_root == state.str() + "/abc/runsc");
  CHECK(found[0].runc_root.empty());
  CHECK(found[1].runsc_root == "/var/run/runsc");

  CHECK_THROWS_WITH(cli::node_view_candidates(t, "docker", "", state.str()),
                    Catch::Contains("runc or runsc"));
  CHECK_THROWS_WITH(cli::node_view_candidates(t, "", "relative", state.str()), Catch::Contains("absolute"));
}

TEST_CASE("node-view exits 2 on bad input and 3 for a container no runtime knows", "[cli]") {
  auto none = node_view({});
  CHECK(none.exit_code == kExitBadInput);
  CHECK_THAT(none.err, Catch::Contains("--container"));
  auto bad = node_view({"--container", "-rf"});
  CHECK(bad.exit_code == kExitBadInput);
  auto runtime = node_view({"--container", "x", "--runtime", "docker"});
  CHECK(runtime.exit_code == kExitBadInput);
  CHECK_THAT(runtime.err, Catch::Contains("runc or runsc"));

  test::TempDir root;
  auto gone = node_view({"--container", "ih-nothere-x.c", "--runtime-root", root.str()});
  INFO(gone.err);
  CHECK(gone.exit_code == kExitInfrastructure);
  CHECK_THAT(gone.err, Catch::Contains("ih-nothere-x.c cannot be observed"));
  CHECK(gone.out.empty());
}
