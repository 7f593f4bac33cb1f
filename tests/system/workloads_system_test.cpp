// `isoprobe bench` inside real containers, directly under runc and under runsc-ptrace
// (--network=none): every workload runs (the rootfs carries the host's /usr, so cc, sh
// and python3 are there) and reports a positive time per iteration; with PATH emptied
// the task-like workloads report why they were skipped. No timing is asserted here:
// the runsc/runc comparison is bench/workloads_getpid_crosscheck's job.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "harness/common/subprocess.h"
#include "tests/support/test_support.h"
#include "tests/system/workloads_container.h"

using namespace isoharness;
using isoharness::workloads_test::OciBundle;
namespace fs = std::filesystem;

namespace {

// Every workload the registry holds, as the built isoprobe lists it on this host.
std::set<std::string> registry_names() {
  std::string isoprobe = workloads_test::isoprobe_path(test::binary_dir());
  if (isoprobe.empty()) FAIL("isoprobe is not built under " << test::binary_dir() << "/probes");
  auto r = run_command({isoprobe, "bench", "--list"}, RunOptions{.deadline = std::chrono::seconds(60)});
  REQUIRE(r.has_value());
  REQUIRE(r->ok());
  std::set<std::string> names;
  const auto listed = nlohmann::json::parse(r->out);  // kept alive: the loop reads into it
  for (const auto& w : listed.at("workloads")) names.insert(w.at("name").get<std::string>());
  REQUIRE(names.size() > 10);
  return names;
}

std::unique_ptr<OciBundle> make_bundle() {
  test::require_system({"runc", "runsc"});
  std::string isoprobe = workloads_test::isoprobe_path(test::binary_dir());
  if (isoprobe.empty()) FAIL("isoprobe is not built under " << test::binary_dir() << "/probes");
  return std::make_unique<OciBundle>(
      std::vector<workloads_test::Bind>{{fs::path(isoprobe).parent_path().string(), "/opt/isoprobe"}});
}

nlohmann::json run_bench_in(OciBundle& bundle, const std::string& runtime, std::vector<std::string> extra) {
  std::vector<std::string> args = {"/opt/isoprobe/isoprobe", "bench", "--min-time", "0.005",
                                   "--benchmark_format=json"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = bundle.run(runtime, args, std::chrono::seconds(240));
  REQUIRE(r.has_value());
  INFO(runtime << ": " << r->describe() << "\nstderr:\n"
               << r->err << "\nstdout:\n"
               << r->out.substr(0, 2000));
  REQUIRE(r->ok());
  auto doc = nlohmann::json::parse(r->out, nullptr, false);
  REQUIRE_FALSE(doc.is_discarded());
  return doc;
}

void check_all_workloads_ran(const nlohmann::json& report) {
  std::set<std::string> seen;
  for (const auto& b : report.at("benchmarks")) {
    std::string name = b.at("name").get<std::string>();
    name = name.substr(0, name.find('/'));
    INFO(name << ": " << b.dump());
    seen.insert(name);
    CHECK_FALSE(b.value("error_occurred", false));
    CHECK(b.at("real_time").get<double>() > 0);
  }
  CHECK(seen == registry_names());
}

}  // namespace

TEST_CASE("every workload runs under runc", "[system][workloads]") {
  auto bundle = make_bundle();
  auto report = run_bench_in(*bundle, "runc", {});
  check_all_workloads_ran(report);
  CHECK(report.at("context").at("isoprobe_scratch").get<std::string>().rfind("/tmp/isoprobe-bench-", 0) == 0);
}

TEST_CASE("every workload runs under runsc (ptrace, no network)", "[system][workloads]") {
  auto bundle = make_bundle();
  check_all_workloads_ran(run_bench_in(*bundle, "runsc", {}));
}

TEST_CASE("in a container without tools on PATH the task-like workloads say why they were skipped",
          "[system][workloads]") {
  auto bundle = make_bundle();
  for (const char* runtime : {"runc", "runsc"}) {
    // The PATH of the container holds only an empty directory.
    auto r =
        bundle->run(runtime, {"/usr/bin/env", "PATH=/proc/none", "/opt/isoprobe/isoprobe", "bench", "--list"},
                    std::chrono::seconds(60));
    REQUIRE(r.has_value());
    INFO(runtime << ": " << r->describe() << "\n" << r->err);
    REQUIRE(r->ok());
    auto doc = nlohmann::json::parse(r->out);
    std::map<std::string, nlohmann::json> by_name;
    for (const auto& w : doc.at("workloads")) by_name[w.at("name").get<std::string>()] = w;
    CHECK(by_name.at("compile_c").at("skip_reason") == "no C compiler (cc, gcc or clang) found in PATH");
    CHECK(by_name.at("shell_pipeline").at("skip_reason") == "sh not found in PATH");
    CHECK(by_name.at("interpreter_startup").at("skip_reason") == "python3 not found in PATH");
    CHECK(by_name.at("spawn_exec").at("available") == true);
  }
}
