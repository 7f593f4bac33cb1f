// The Debian package, as a user gets it: cpack builds the .deb from this build, dpkg-deb
// unpacks it into a scratch root, and the unpacked `isoharness` runs `version`, `plan`,
// `local doctor` and one `run` of a one-sandbox scenario from `/`. It must use the files
// it was installed with, never this build or source tree: doctor's resolved paths, the
// result's deployment profile and the whole result document are checked for that, and the
// unpacked tree must be byte for byte what it was before the run.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "harness/common/subprocess.h"
#include "tests/support/test_support.h"
#include "tests/system/local_test_support.h"

using namespace isoharness;
namespace fs = std::filesystem;

namespace {

RunResult run_in(const std::vector<std::string>& argv, const std::string& cwd,
                 std::chrono::minutes deadline) {
  RunOptions o;
  o.cwd = cwd;
  o.deadline = deadline;
  o.env_set["NO_COLOR"] = "1";
  // Empty counts as unset: nothing from the caller's environment points the tool anywhere.
  for (const char* v : {"ISOHARNESS_SCENARIOS_DIR", "ISOHARNESS_PROBE_DIR", "ISOHARNESS_POSTURE_AGENT_DIR",
                        "ISOHARNESS_WORLD_HELPER"})
    o.env_set[v] = "";
  auto r = run_command(argv, o);
  REQUIRE(r.has_value());
  INFO(argv[0] << " " << (argv.size() > 1 ? argv[1] : "") << "\nstdout:\n"
               << r->out << "\nstderr:\n"
               << r->err);
  REQUIRE(r->exited);
  return *r;
}

// Every file under root with its size and contents' hash: what "unchanged" is checked against.
std::map<std::string, std::string> snapshot(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    std::string what = e.is_symlink() ? "link " + fs::read_symlink(e.path()).string()
                       : e.is_directory()
                           ? "dir"
                           : "file " + std::to_string(e.file_size()) + " " +
                                 std::to_string(std::hash<std::string>{}(test::read_text(e.path())));
    out[fs::relative(e.path(), root).string()] = what;
  }
  return out;
}

std::string build_the_package(const std::string& scratch) {
  const std::string config = test::binary_dir() + "/CPackConfig.cmake";
  REQUIRE(fs::exists(config));
  auto r = run_in({"cpack", "--config", config, "-B", scratch + "/pkg"}, scratch, std::chrono::minutes(10));
  REQUIRE(r.exit_code == 0);
  for (const auto& e : fs::directory_iterator(scratch + "/pkg"))
    if (e.path().extension() == ".deb") return e.path().string();
  FAIL("cpack wrote no .deb into " << scratch << "/pkg");
  return "";
}

}  // namespace

TEST_CASE("install: the .deb unpacked into a scratch root runs from / with its own files only",
          "[system][install]") {
  test::require_system({"cpack", "dpkg-deb", "runsc", "runc", "sshd", "nft", "dnsmasq", "ip", "nsenter"});
  test::local::ScratchDir scratch;
  const std::string deb = build_the_package(scratch.path);

  {  // the control fields name the package, the version and what it needs
    auto control = run_in({"dpkg-deb", "-f", deb}, "/", std::chrono::minutes(1));
    REQUIRE(control.exit_code == 0);
    CHECK_THAT(control.out, Catch::Contains("Package: isoharness\n"));
    auto version =
        run_in({test::binary_dir() + "/harness/cli/isoharness", "version"}, "/", std::chrono::minutes(1));
    const std::string project_version = version.out.substr(11, version.out.find(' ', 11) - 11);
    CHECK_THAT(control.out, Catch::Contains("Version: " + project_version + "\n"));
    CHECK_THAT(control.out, Catch::Contains("Recommends: runsc\n"));
    for (const char* dep :
         {"runc", "openssh-server", "openssh-client", "dnsmasq-base", "nftables", "iproute2", "util-linux",
          "procps", "golang-github-containers-common", "libssh2-1", "libyaml-cpp0.7", "libstdc++6", "libc6"})
      CHECK_THAT(control.out, Catch::Contains(std::string(" ") + dep));
  }

  const fs::path root = fs::path(scratch.path) / "root";
  REQUIRE(run_in({"dpkg-deb", "-x", deb, root.string()}, "/", std::chrono::minutes(2)).exit_code == 0);
  const fs::path prefix = root / "usr";
  const std::string bin = (prefix / "bin/isoharness").string();
  const std::string scenarios = (prefix / "share/isoharness/scenarios").string();
  const std::string lib = (prefix / "lib/isoharness").string();
  for (const auto& p :
       {bin, scenarios + "/strict.yaml", scenarios + "/deployments/local.yaml",
        scenarios + "/parity/default.yaml", scenarios + "/invalid/unknown-level.yaml",
        lib + "/isoprobe-bundle/isoprobe", lib + "/isoprobe-bundle/lib/isoprobe.bin", lib + "/getpid-static",
        lib + "/isoharness-world-helper", (prefix / "share/doc/isoharness/README.md").string(),
        (prefix / "share/doc/isoharness/examples/workflows/nightly.example.yml").string()})
    CHECK(fs::exists(p));
  const auto before = snapshot(root);

  auto version = run_in({bin, "version"}, "/", std::chrono::minutes(1));
  CHECK(version.exit_code == 0);
  CHECK_THAT(version.out, Catch::Contains("(install prefix " + prefix.string() + ")"));

  auto doctor = run_in({bin, "local", "doctor"}, "/", std::chrono::minutes(2));
  CHECK(doctor.exit_code == 0);
  const std::string from_prefix = " (install prefix " + prefix.string() + ")";
  CHECK_THAT(doctor.out, Catch::Contains(scenarios + from_prefix));
  CHECK_THAT(doctor.out, Catch::Contains(lib + "/isoprobe-bundle" + from_prefix));
  CHECK_THAT(doctor.out, Catch::Contains(lib + "/isoharness-world-helper" + from_prefix));
  CHECK_THAT(doctor.out, Catch::Contains(lib + "/getpid-static"));
  CHECK_THAT(doctor.out, !Catch::Contains(test::binary_dir()) && !Catch::Contains(test::source_dir()));

  auto plan = run_in({bin, "plan", scenarios + "/strict.yaml"}, "/", std::chrono::minutes(1));
  CHECK(plan.exit_code == 0);
  // A bare eval-set config far from any profile: planned against the installed one.
  fs::copy_file(test::source_dir() + "/tests/fixtures/policy/reference-strict.yaml",
                fs::path(scratch.path) / "bare.yaml");
  CHECK(run_in({bin, "plan", scratch.path + "/bare.yaml"}, "/", std::chrono::minutes(1)).exit_code == 0);

  const std::string out = scratch.path + "/out";
  auto run = run_in(
      {bin, "run", scenarios + "/strict.yaml", "--runtimes", "gvisor", "--attempts", "1", "--out", out}, "/",
      std::chrono::minutes(15));
  CHECK(run.exit_code == 0);
  const std::string result_text = test::read_text(out + "/result.json");
  auto result = nlohmann::json::parse(result_text);
  CHECK(result["summary"]["verdict"] == "pass");
  CHECK(result["sandboxes"].size() == 1);
  CHECK(result["context"]["deployment"] == scenarios + "/deployments/local.yaml");
  CHECK(result_text.find(test::binary_dir()) == std::string::npos);
  CHECK(result_text.find(test::source_dir()) == std::string::npos);

  CHECK(snapshot(root) == before);  // nothing written into the install tree
}
