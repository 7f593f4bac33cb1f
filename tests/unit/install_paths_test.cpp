// Where shipped files are found: flag, environment, install prefix, build tree, in that
// order, on scratch trees built by the test (no process state: the context is passed in).
#include "harness/common/install_paths.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>

using namespace isoharness;
namespace fs = std::filesystem;

namespace {

struct Scratch {
  fs::path root;
  Scratch() {
    char tmpl[] = "/tmp/ih-paths-test-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    root = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  fs::path file(const std::string& rel) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << "x";
    return root / rel;
  }
  fs::path dir(const std::string& rel) {
    fs::create_directories(root / rel);
    return root / rel;
  }
};

PathContext context(const fs::path& exe, std::map<std::string, std::string> env = {},
                    const fs::path& build = {}, const fs::path& source = {}) {
  PathContext c;
  c.exe = exe.string();
  c.build_dir = build.string();
  c.source_dir = source.string();
  c.getenv = [env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  return c;
}

}  // namespace

TEST_CASE("install paths: the prefix of <prefix>/bin/isoharness, and none elsewhere", "[common][install]") {
  CHECK(install_prefix_of("/usr/bin/isoharness") == "/usr");
  CHECK(install_prefix_of("/opt/ih/bin/isoharness") == "/opt/ih");
  CHECK(install_prefix_of("/work/build/harness/cli/isoharness").empty());
  CHECK(install_prefix_of("isoharness").empty());
}

TEST_CASE("install paths: an installed binary finds its own prefix's files", "[common][install]") {
  Scratch s;
  const fs::path exe = s.file("usr/bin/isoharness");
  s.dir("usr/share/isoharness/scenarios");
  s.file("usr/lib/isoharness/isoprobe-bundle/isoprobe");
  s.file("usr/lib/isoharness/isoharness-world-helper");
  // A build tree that has everything too: the installed binary does not live in it.
  s.dir("src/scenarios");
  s.file("build/probes/isoprobe-bundle/isoprobe");
  const PathContext c = context(exe, {}, s.root / "build", s.root / "src");

  ResolvedPath scenarios = resolve_path(kScenariosDir, "", c);
  CHECK(scenarios.origin == PathOrigin::kInstallPrefix);
  CHECK(scenarios.path == (s.root / "usr/share/isoharness/scenarios").string());
  CHECK(scenarios.describe() == scenarios.path + " (install prefix " + (s.root / "usr").string() + ")");
  CHECK(resolve_path(kIsoprobeBundle, "", c).path ==
        (s.root / "usr/lib/isoharness/isoprobe-bundle").string());
  CHECK(resolve_path(kWorldHelper, "", c).path ==
        (s.root / "usr/lib/isoharness/isoharness-world-helper").string());
}

TEST_CASE("install paths: an installed binary missing a file never falls back to the build tree",
          "[common][install]") {
  Scratch s;
  const fs::path exe = s.file("usr/bin/isoharness");
  s.file("build/probes/isoprobe-bundle/isoprobe");
  ResolvedPath bundle = resolve_path(kIsoprobeBundle, "", context(exe, {}, s.root / "build", s.root / "src"));
  CHECK_FALSE(bundle.found());
  CHECK(bundle.path.empty());
  CHECK_THAT(bundle.problem,
             Catch::Contains((s.root / "usr/lib/isoharness/isoprobe-bundle/isoprobe").string()));
  CHECK_THAT(bundle.problem, Catch::Contains("--isoprobe-bundle"));
  CHECK_THAT(bundle.problem, Catch::Contains("ISOHARNESS_PROBE_DIR"));
}

TEST_CASE("install paths: a binary inside its build tree uses the build and source trees",
          "[common][install]") {
  Scratch s;
  const fs::path exe = s.file("build/harness/cli/isoharness");
  s.dir("src/scenarios");
  s.file("build/probes/isoprobe-bundle/isoprobe");
  s.file("build/harness/cli/isoharness-world-helper");
  const PathContext c = context(exe, {}, s.root / "build", s.root / "src");
  ResolvedPath scenarios = resolve_path(kScenariosDir, "", c);
  CHECK(scenarios.origin == PathOrigin::kBuildTree);
  CHECK(scenarios.path == (s.root / "src/scenarios").string());
  CHECK(scenarios.source == "source tree " + (s.root / "src").string());
  CHECK(resolve_path(kIsoprobeBundle, "", c).path == (s.root / "build/probes/isoprobe-bundle").string());
  CHECK(resolve_path(kWorldHelper, "", c).origin == PathOrigin::kBuildTree);
  // A copy of that binary outside the tree gets none of it.
  const fs::path copy = s.file("elsewhere/isoharness");
  CHECK_FALSE(resolve_path(kScenariosDir, "", context(copy, {}, s.root / "build", s.root / "src")).found());
}

TEST_CASE("install paths: the flag, then the environment, win over the prefix", "[common][install]") {
  Scratch s;
  const fs::path exe = s.file("usr/bin/isoharness");
  s.dir("usr/share/isoharness/scenarios");
  const fs::path mine = s.dir("mine");
  const fs::path theirs = s.dir("theirs");
  const PathContext c = context(exe, {{"ISOHARNESS_SCENARIOS_DIR", theirs.string()}});
  ResolvedPath by_flag = resolve_path(kScenariosDir, mine.string(), c);
  CHECK(by_flag.origin == PathOrigin::kFlag);
  CHECK(by_flag.path == mine.string());
  CHECK(by_flag.source == "--scenarios-dir");
  ResolvedPath by_env = resolve_path(kScenariosDir, "", c);
  CHECK(by_env.origin == PathOrigin::kEnvironment);
  CHECK(by_env.path == theirs.string());
  CHECK(by_env.describe() == theirs.string() + " (ISOHARNESS_SCENARIOS_DIR)");
}

TEST_CASE("install paths: a flag or variable naming nothing usable is an error, not a fallback",
          "[common][install]") {
  Scratch s;
  const fs::path exe = s.file("usr/bin/isoharness");
  s.file("usr/lib/isoharness/isoprobe-bundle/isoprobe");
  const fs::path empty = s.dir("empty-bundle");
  const PathContext c = context(exe, {{"ISOHARNESS_PROBE_DIR", empty.string()}});
  ResolvedPath by_env = resolve_path(kIsoprobeBundle, "", c);
  CHECK_FALSE(by_env.found());
  CHECK(by_env.problem == "ISOHARNESS_PROBE_DIR names " + empty.string() + ", but " +
                              (empty / "isoprobe").string() + " does not exist");
  ResolvedPath by_flag = resolve_path(kIsoprobeBundle, (s.root / "nowhere").string(), c);
  CHECK_FALSE(by_flag.found());
  CHECK_THAT(by_flag.problem, Catch::StartsWith("--isoprobe-bundle names "));
  CHECK(by_flag.describe() == "not found: " + by_flag.problem);
}

TEST_CASE("install paths: origins read as words", "[common][install]") {
  CHECK(std::string(to_string(PathOrigin::kFlag)) == "flag");
  CHECK(std::string(to_string(PathOrigin::kEnvironment)) == "environment");
  CHECK(std::string(to_string(PathOrigin::kInstallPrefix)) == "install prefix");
  CHECK(std::string(to_string(PathOrigin::kBuildTree)) == "build tree");
  CHECK(std::string(to_string(PathOrigin::kNotFound)) == "not found");
}
