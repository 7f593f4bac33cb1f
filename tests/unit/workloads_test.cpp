// The workloads of `isoprobe bench`: the registry, the helpers, and the real isoprobe
// program run on this host for a tiny number of iterations.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "harness/common/subprocess.h"
#include "tests/support/test_support.h"
#include "workloads/child_process.h"
#include "workloads/registry.h"

using namespace isoprobe::workloads;
namespace test = isoharness::test;
namespace fs = std::filesystem;

namespace {

// The program under test: the isoprobe bundle's launcher once the bundle is built, else
// the plain executable.
std::string isoprobe() {
  for (const char* rel : {"/probes/isoprobe-bundle/isoprobe", "/probes/isoprobe"}) {
    std::string path = isoharness::test::binary_dir() + rel;
    if (::access(path.c_str(), X_OK) == 0 && fs::is_regular_file(path)) return path;
  }
  FAIL("isoprobe is not built under " << isoharness::test::binary_dir() << "/probes");
  return {};
}

isoharness::RunResult run_isoprobe(const std::vector<std::string>& args,
                                   std::map<std::string, std::string> env = {}) {
  std::vector<std::string> argv = {isoprobe(), "bench"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = isoharness::run_command(
      argv, isoharness::RunOptions{
                .deadline = std::chrono::seconds(90), .max_output = 4 << 20, .env_set = std::move(env)});
  REQUIRE(r.has_value());
  INFO(isoharness::render_argv(argv) << "\nstderr: " << r->err);
  REQUIRE_FALSE(r->timed_out);
  return *r;
}

// Benchmark names carry Google Benchmark's suffixes ("compile_c/iterations:3/real_time"):
// the workload is the part before the first '/'.
std::string workload_of(const std::string& benchmark_name) {
  return benchmark_name.substr(0, benchmark_name.find('/'));
}

// The names in the registry (workload_list.h): the one list, read, never copied.
std::set<std::string> registry_names() {
  std::set<std::string> names;
  for (const Workload* w : registered_workloads()) names.insert(std::string(w->name));
  return names;
}

void noop_run(benchmark::State&, const Env&) {}

}  // namespace

TEST_CASE("the registry holds every workload once, each found by its name", "[workloads]") {
  auto list = registered_workloads();
  CHECK_FALSE(registry_problem(list).has_value());
  CHECK(list.size() == registry_names().size());
  for (const Workload* w : list) CHECK(find_workload(w->name) == w);
  // The parity cross-check and the default parity scenario name these.
  for (const char* name : {"getpid", "cpu_hash", "compile_c"}) CHECK(registry_names().count(name));
  CHECK(find_workload("getpid") == &kGetpid);
  CHECK(find_workload("nope") == nullptr);
}

TEST_CASE("the registry refuses duplicates and badly named workloads", "[workloads]") {
  const Workload a{.name = "alpha", .family = "f", .description = "d", .run = noop_run};
  const Workload a_again{.name = "alpha", .family = "g", .description = "other", .run = noop_run};
  const Workload camel{.name = "BadName", .family = "f", .description = "d", .run = noop_run};
  const Workload no_run{.name = "no_run", .family = "f", .description = "d"};
  const Workload* dup[] = {&a, &kGetpid, &a_again};
  auto problem = registry_problem(dup);
  REQUIRE(problem.has_value());
  CHECK(*problem == "workload #2 'alpha': duplicate name");
  const Workload* bad[] = {&camel};
  REQUIRE(registry_problem(bad).has_value());
  CHECK_THAT(*registry_problem(bad), Catch::Contains("'BadName'") && Catch::Contains("lower_snake_case"));
  const Workload* missing[] = {&no_run};
  CHECK_THAT(registry_problem(missing).value_or(""), Catch::Contains("no run function"));
  const Workload* fine[] = {&a, &kGetpid};
  CHECK_FALSE(registry_problem(fine).has_value());
}

TEST_CASE("find_in_path takes only absolute directories and executable files", "[workloads]") {
  test::TempDir dir("ih-wl-unit");
  std::string tool = dir.str() + "/mytool";
  std::ofstream(tool) << "#!/bin/sh\n";
  std::ofstream(dir.str() + "/plain") << "data\n";
  fs::create_directory(dir.str() + "/adir");
  REQUIRE(::chmod(tool.c_str(), 0755) == 0);
  CHECK(find_in_path("mytool", "/nonexistent:" + dir.str()) == tool);
  CHECK(find_in_path("plain", dir.str()).empty());  // not executable
  CHECK(find_in_path("adir", dir.str()).empty());   // a directory
  CHECK(find_in_path("mytool", "").empty());
  CHECK(find_in_path("mytool", "relative::.").empty());  // never the current directory
  CHECK(find_in_path("../mytool", dir.str()).empty());
}

TEST_CASE("the tiny static program runs and exits with 0", "[workloads]") {
  test::TempDir dir("ih-wl-unit");
  std::string path = dir.str() + "/tiny";
  REQUIRE_FALSE(write_tiny_exit_program(path).has_value());
  CHECK(fs::file_size(path) == 129);
  auto r = isoharness::run_command({path});
  REQUIRE(r.has_value());
  CHECK(r->ok());
  CHECK(write_tiny_exit_program(dir.str() + "/no/such/dir/tiny").value_or("").find("open") == 0);
}

TEST_CASE("ChildRunner reports exit status and kills a child past its deadline", "[workloads]") {
  ChildRunner runner(std::chrono::milliseconds(300));
  std::string true_path = find_in_path("true", "/usr/bin:/bin");
  std::string false_path = find_in_path("false", "/usr/bin:/bin");
  std::string sleep_path = find_in_path("sleep", "/usr/bin:/bin");
  REQUIRE_FALSE(true_path.empty());
  CHECK_FALSE(runner.run({true_path}).has_value());
  CHECK(runner.run({false_path}).value_or("") == false_path + " exited with status 1");
  auto start = std::chrono::steady_clock::now();
  auto slow = runner.run({sleep_path, "30"});
  CHECK(slow.value_or("") == sleep_path + " did not finish within 300 ms (killed)");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK(runner.run({"relative"}).value_or("") == "program path is not absolute");
}

TEST_CASE("isoprobe bench --list prints every workload as JSON", "[workloads]") {
  auto r = run_isoprobe({"--list"});
  REQUIRE(r.exit_code == 0);
  auto doc = nlohmann::json::parse(r.out);
  CHECK(doc.at("schema") == "isoprobe.workloads/v1");
  std::set<std::string> names;
  for (const auto& w : doc.at("workloads")) {
    names.insert(w.at("name").get<std::string>());
    CHECK_FALSE(w.at("family").get<std::string>().empty());
    CHECK_FALSE(w.at("description").get<std::string>().empty());
    bool available = w.at("available").get<bool>();
    CHECK(w.at("skip_reason").is_null() == available);
    CHECK((w.at("iterations") == "auto" || w.at("iterations").get<int>() > 0));
  }
  CHECK(names == registry_names());
}

TEST_CASE("with an empty PATH the task-like workloads are skipped and say why", "[workloads]") {
  auto r = run_isoprobe({"--list"}, {{"PATH", ""}});
  REQUIRE(r.exit_code == 0);
  auto doc = nlohmann::json::parse(r.out);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& w : doc.at("workloads")) by_name[w.at("name").get<std::string>()] = w;
  CHECK(by_name.at("compile_c").at("skip_reason") == "no C compiler (cc, gcc or clang) found in PATH");
  CHECK(by_name.at("shell_pipeline").at("skip_reason") == "sh not found in PATH");
  CHECK(by_name.at("interpreter_startup").at("skip_reason") == "python3 not found in PATH");
  CHECK(by_name.at("getpid").at("available") == true);
  CHECK(by_name.at("spawn_exec").at("available") == true);

  // Running them: they still appear in the report, marked skipped, with the reason.
  auto run = run_isoprobe(
      {"--workloads", "compile_c,getpid", "--min-time", "0.001", "--benchmark_format=json"}, {{"PATH", ""}});
  REQUIRE(run.exit_code == 0);
  auto report = nlohmann::json::parse(run.out);
  CHECK(report.at("context").at("isoprobe_skipped.compile_c") ==
        "no C compiler (cc, gcc or clang) found in PATH");
  REQUIRE(report.at("benchmarks").size() == 2);
  const auto& compile = report.at("benchmarks").at(0);
  CHECK(workload_of(compile.at("name")) == "compile_c");
  CHECK(compile.at("error_occurred") == true);
  CHECK(compile.at("error_message") == "skipped: no C compiler (cc, gcc or clang) found in PATH");
  const auto& getpid = report.at("benchmarks").at(1);
  CHECK(workload_of(getpid.at("name")) == "getpid");
  CHECK_FALSE(getpid.contains("error_occurred"));
  CHECK(getpid.at("real_time").get<double>() > 0);
}

TEST_CASE("every workload runs on the host and reports a positive time per iteration", "[workloads]") {
  test::TempDir scratch("ih-wl-unit");
  auto r = run_isoprobe({"--min-time", "0.001", "--scratch", scratch.str(), "--benchmark_format=json"});
  REQUIRE(r.exit_code == 0);
  auto report = nlohmann::json::parse(r.out);
  std::set<std::string> seen;
  for (const auto& b : report.at("benchmarks")) {
    std::string name = workload_of(b.at("name"));
    INFO(name << ": " << b.dump());
    seen.insert(name);
    CHECK(b.at("run_type") == "iteration");
    CHECK_FALSE(b.value("error_occurred", false));
    CHECK(b.at("iterations").get<long>() >= 1);
    CHECK(b.at("real_time").get<double>() > 0);
    CHECK(b.at("time_unit") == "ns");
  }
  CHECK(seen == registry_names());
  CHECK(report.at("context").at("isoprobe_scratch").get<std::string>().rfind(scratch.str() + "/", 0) == 0);
  CHECK(fs::is_empty(scratch.path));  // its private scratch directory is gone
}

TEST_CASE("isoprobe bench refuses bad usage with exit 2 and names the item", "[workloads]") {
  auto unknown = run_isoprobe({"--workloads", "getpid,nosuch"});
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.err, Catch::Contains("unknown workload 'nosuch'"));
  auto bad_time = run_isoprobe({"--min-time", "abc", "--repetitions", "0"});
  CHECK(bad_time.exit_code == 2);
  CHECK_THAT(bad_time.err, Catch::Contains("--min-time: 'abc'") && Catch::Contains("--repetitions: '0'"));
  auto stray = run_isoprobe({"--frobnicate"});
  CHECK(stray.exit_code == 2);
  CHECK_THAT(stray.err, Catch::Contains("unknown argument '--frobnicate'"));
  auto bad_scratch = run_isoprobe({"--scratch", "/nonexistent/dir", "--workloads", "getpid"});
  CHECK(bad_scratch.exit_code == 3);
  CHECK_THAT(bad_scratch.err, Catch::Contains("/nonexistent/dir"));
}

TEST_CASE("repetitions are passed to Google Benchmark", "[workloads]") {
  auto r = run_isoprobe({"--workloads", "cpu_hash", "--min-time", "0.001", "--repetitions", "3",
                         "--benchmark_format=json", "--benchmark_report_aggregates_only=false"});
  REQUIRE(r.exit_code == 0);
  auto report = nlohmann::json::parse(r.out);
  int iterations = 0;
  for (const auto& b : report.at("benchmarks")) iterations += b.at("run_type") == "iteration";
  CHECK(iterations == 3);
}
