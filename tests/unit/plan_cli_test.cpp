// `isoharness plan` end to end: the built binary, run as a user would.
#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "harness/common/subprocess.h"
#include "tests/support/test_support.h"

using namespace isoharness;
namespace fs = std::filesystem;

namespace {

std::string binary() {
  return test::binary_dir() + "/harness/cli/isoharness";
}

RunResult plan(std::vector<std::string> args, const std::string& cwd = test::source_dir(),
               const std::string& scenarios_dir = "") {
  std::vector<std::string> argv = {binary(), "plan"};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions o;
  o.cwd = cwd;
  if (!scenarios_dir.empty()) o.env_set["ISOHARNESS_SCENARIOS_DIR"] = scenarios_dir;
  o.deadline = std::chrono::seconds(30);
  o.env_set["NO_COLOR"] = "1";
  auto r = run_command(argv, o);
  REQUIRE(r.has_value());
  REQUIRE(r->exited);
  return *r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

}  // namespace

TEST_CASE("plan: every default scenario is accepted in every format", "[plan]") {
  for (const char* name : {"strict", "gvisor-only", "standard", "mixed", "strict-egress", "strict-nonroot-ro",
                           "gpu-strict", "compose-ctf", "compose-helper"}) {
    INFO(name);
    std::string file = std::string("scenarios/") + name + ".yaml";
    auto text = plan({file});
    CHECK(text.exit_code == 0);
    CHECK_THAT(text.out, Catch::Contains("accepted"));
    auto json = plan({file, "--format", "json"});
    CHECK(json.exit_code == 0);
    auto doc = nlohmann::json::parse(json.out);
    CHECK(doc["schema"] == "isoharness.plan/v1");
    CHECK(doc["errors"].empty());
    auto values = plan({file, "--format", "values"});
    CHECK(values.exit_code == 0);
    CHECK_THAT(values.out, Catch::Contains("services:"));
  }
}

TEST_CASE("plan --format json follows the contract", "[plan]") {
  auto r = plan({"scenarios/mixed.yaml", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  auto doc = nlohmann::json::parse(r.out);
  REQUIRE(doc["items"].size() == 2);
  for (const auto& item : doc["items"]) {
    for (const char* key :
         {"id", "task", "item", "level", "runtime_class", "gpu", "values", "expect", "findings"}) {
      CHECK(item.contains(key));
    }
    for (const char* key : {"kernel", "cap_eff", "cap_eff_forbidden", "no_new_privs", "uid", "root_writable",
                            "writable_paths", "seccomp", "allow_domains", "allow_cidr", "egress_roles"}) {
      CHECK(item["expect"].contains(key));
    }
  }
  const auto& strict = doc["items"][0];
  CHECK(strict["level"] == "strict");
  CHECK(strict["runtime_class"] == "gvisor");
  CHECK(strict["values"]["services"]["default"]["securityContext"]["capabilities"]["drop"][0] == "ALL");
  CHECK(strict["expect"]["kernel"] == "gvisor");
  CHECK(strict["expect"]["cap_eff"] == "0000000000000000");
  const auto& open = doc["items"][1];
  CHECK(open["level"] == "standard");
  CHECK(open["runtime_class"].is_null());
  CHECK(open["expect"]["kernel"] == "host");
  CHECK(open["expect"]["cap_eff"].is_null());
  CHECK(open["expect"]["uid"].is_null());
  // Stable ids across runs.
  auto again = nlohmann::json::parse(plan({"scenarios/mixed.yaml", "--format", "json"}).out);
  CHECK(again["items"][0]["id"] == strict["id"]);
}

TEST_CASE("plan: the GPU known risk is in text and json, and --deny-known-risks refuses it", "[plan]") {
  auto text = plan({"scenarios/gpu-strict.yaml"});
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("KNOWN RISK gpu_without_syscall_boundary"));
  CHECK_THAT(text.out, Catch::Contains("node default (runc)"));
  CHECK_THAT(text.out, Catch::Contains("drop ALL"));
  auto json = nlohmann::json::parse(plan({"scenarios/gpu-strict.yaml", "--format", "json"}).out);
  const auto& item = json["items"][0];
  CHECK(item["gpu"] == true);
  CHECK(item["runtime_class"].is_null());
  CHECK(item["findings"][0]["code"] == "gpu_without_syscall_boundary");
  CHECK(item["findings"][0]["severity"] == "known_risk");
  CHECK(json["known_risks"] == 1);
  auto denied = plan({"scenarios/gpu-strict.yaml", "--deny-known-risks"});
  CHECK(denied.exit_code == 2);
  CHECK_THAT(denied.err,
             Catch::Contains("scenarios/gpu-strict.yaml:14:11: task model_finetune, item finetune_small"));
  CHECK_THAT(denied.err,
             Catch::Contains("known risk refused by --deny-known-risks: gpu_without_syscall_boundary"));
  // Nothing to deny elsewhere.
  CHECK(plan({"scenarios/strict.yaml", "--deny-known-risks"}).exit_code == 0);
}

TEST_CASE("plan --format values prints the rendered values per item as YAML", "[plan]") {
  auto r = plan({"scenarios/strict-nonroot-ro.yaml", "--format", "values"});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(
      r.out,
      Catch::Matches("(.|\n)*binary_analysis/0-reverse_me-[0-9a-f]{8}:\n  services:\n    default:(.|\n)*"));
  CHECK_THAT(r.out, Catch::Contains("runtimeClassName: gvisor"));
  CHECK_THAT(r.out, Catch::Contains("readOnlyRootFilesystem: true"));
  CHECK_THAT(r.out, Catch::Contains("runAsUser: 1000"));
  CHECK_THAT(r.out, Catch::Contains("mountPath: /home/agent"));
}

TEST_CASE("plan: a bare eval-set config, the --runtime-class option and --help", "[plan]") {
  auto bare = plan({"tests/fixtures/policy/reference-strict.yaml", "--format", "json"});
  REQUIRE(bare.exit_code == 0);
  auto doc = nlohmann::json::parse(bare.out);
  CHECK(doc["scenario"]["bare_eval_set"] == true);
  CHECK(doc["items"][0]["runtime_class"] == "gvisor");
  auto forced = nlohmann::json::parse(
      plan({"scenarios/standard.yaml", "--format", "json", "--runtime-class", "gvisor"}).out);
  CHECK(forced["items"][0]["runtime_class"] == "gvisor");
  CHECK(forced["items"][0]["level"] == "standard");
  auto help = plan({"--help"});
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("scenarios/deployments/local.yaml"));
  auto bad_format = plan({"scenarios/strict.yaml", "--format", "xml"});
  CHECK(bad_format.exit_code == 2);
}

TEST_CASE("plan: the deployment is found beside the scenario or in the scenarios dir, else a clear error",
          "[plan]") {
  test::TempDir dir("ih-plan-test");
  fs::copy_file(test::source_dir() + "/scenarios/strict.yaml", dir.path / "strict.yaml");
  const std::string no_scenarios = (dir.path / "no-scenarios").string();
  auto missing = plan({(dir.path / "strict.yaml").string()}, dir.path.string(), no_scenarios);
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Catch::Contains("no deployment profile"));
  CHECK_THAT(missing.err, Catch::Contains("ISOHARNESS_SCENARIOS_DIR names " + no_scenarios));
  CHECK_THAT(missing.err, Catch::Contains("--deployment FILE"));
  // Without the variable, from any directory: the source tree's profile (this binary is in the build tree).
  CHECK(plan({(dir.path / "strict.yaml").string()}, "/").exit_code == 0);
  fs::create_directories(dir.path / "deployments");
  fs::copy_file(test::source_dir() + "/scenarios/deployments/local.yaml",
                dir.path / "deployments" / "local.yaml");
  CHECK(plan({(dir.path / "strict.yaml").string()}, dir.path.string()).exit_code == 0);
  auto explicit_missing = plan({"scenarios/strict.yaml", "--deployment", "/nonexistent/ih/none.yaml"});
  CHECK(explicit_missing.exit_code == 2);
  CHECK_THAT(explicit_missing.err, Catch::Contains("/nonexistent/ih/none.yaml: cannot read file"));
  auto json_missing =
      plan({"scenarios/strict.yaml", "--deployment", "/nonexistent/ih/none.yaml", "--format", "json"});
  CHECK(json_missing.exit_code == 2);
  CHECK(nlohmann::json::parse(json_missing.out)["errors"].size() == 1);
}

TEST_CASE("plan: every config in scenarios/invalid is refused with its expected message", "[plan]") {
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(test::source_dir() + "/scenarios/invalid")) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".yaml" || name.ends_with(".deployment.yaml")) continue;
    ++cases;
    INFO(name);
    const fs::path stem = entry.path().parent_path() / entry.path().stem();
    REQUIRE(fs::exists(stem.string() + ".expected"));
    std::vector<std::string> args = {"scenarios/invalid/" + name};
    if (fs::exists(stem.string() + ".deployment.yaml")) {
      args.push_back("--deployment");
      args.push_back("scenarios/invalid/" + stem.filename().string() + ".deployment.yaml");
    }
    auto r = plan(args);
    CHECK(r.exit_code == 2);
    for (const auto& line : lines_of(test::read_text(stem.string() + ".expected"))) {
      CHECK_THAT(r.err, Catch::Contains(line));
    }
    // JSON callers get the same errors in the document.
    args.push_back("--format");
    args.push_back("json");
    auto j = plan(args);
    CHECK(j.exit_code == 2);
    auto doc = nlohmann::json::parse(j.out);
    CHECK_FALSE(doc["errors"].empty());
    CHECK(doc["accepted"] == false);
  }
  CHECK(cases >= 12);
}

namespace {

// Whether this binary was built with a sanitizer (memory figures mean nothing then).
constexpr bool kSanitized =
#if defined(__SANITIZE_ADDRESS__)
    true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    true;
#else
    false;
#endif
#else
    false;
#endif

long peak_child_rss_mib() {
  rusage u{};
  REQUIRE(getrusage(RUSAGE_CHILDREN, &u) == 0);
  return u.ru_maxrss / 1024;
}

}  // namespace

TEST_CASE("plan: a 50,000-item eval set is planned in bounded memory", "[plan]") {
  test::TempDir dir("ih-plan-test");
  const fs::path file = dir.path / "large.yaml";
  {
    std::ofstream out(file);
    out << "eval_set:\n  isolation: strict\n  tasks:\n    - name: large_task\n      items:\n";
    for (int i = 0; i < 50000; ++i) {
      out << "        - name: item" << i << "\n          args: { target_profile: small, n: " << i
          << " }\n          sample_ids: [s-" << i << "]\n";
    }
    out << "sandbox_defaults: { image: registry.example.com/evals/cyber-task:v1, image_user: root }\n";
  }
  std::vector<std::string> argv = {binary(),
                                   "plan",
                                   file.string(),
                                   "--format",
                                   "json",
                                   "--deployment",
                                   test::source_dir() + "/scenarios/deployments/local.yaml"};
  RunOptions o;
  o.deadline = std::chrono::minutes(5);
  o.max_output = 256u << 20;
  auto r = run_command(argv, o);
  REQUIRE(r.has_value());
  INFO(r->err.substr(0, 2000));
  REQUIRE(r->exit_code == 0);
  CHECK_FALSE(r->out_truncated);
  auto doc = nlohmann::json::parse(r->out);
  CHECK(doc["items"].size() == 50000);
  CHECK(doc["items"][49999]["level"] == "strict");
  // The bound: 256 MB of peak memory (the largest child this test ran).
  if (!kSanitized) CHECK(peak_child_rss_mib() < 256);
}

TEST_CASE("plan: hostile YAML ends in exit 2 with a located message, never a crash", "[plan]") {
  test::TempDir dir("ih-plan-test");
  struct Case {
    std::string text, expected;
  };
  const std::vector<Case> cases = {
      {"eval_set: &a {x: *a}\n", "hostile.yaml:1:18: an alias refers to a node that contains it (a cycle)"},
      {"eval_set:\n  tasks: [{name: t\xff, items: [{name: i}]}]\n",
       "hostile.yaml:2:19: the file is not UTF-8 text (byte 0xff here)"},
      {"eval_set: " + std::string(5000, '[') + "\n", "hostile.yaml:2:1: nested more than"},
      {"? [a]\n: b\neval_set: {}\n", "hostile.yaml:1:3: mapping keys must be plain strings"},
  };
  for (const auto& c : cases) {
    INFO(c.text.substr(0, 60));
    const fs::path file = dir.path / "hostile.yaml";
    std::ofstream(file, std::ios::binary) << c.text;
    for (const char* format : {"text", "json"}) {
      auto r = plan({file.string(), "--format", format});
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err, Catch::Contains(c.expected));
      if (std::string(format) == "json") CHECK_NOTHROW(nlohmann::json::parse(r.out));
    }
  }
}

TEST_CASE("plan --format sarif: a pull request's refused item and known risk, each at its line", "[plan]") {
  // tests/fixtures/sarif/pull-request.yaml: the item asking for a level below the eval set's
  // has its isolation at line 15; the GPU item starts at line 19.
  const std::string file = "tests/fixtures/sarif/pull-request.yaml";
  auto r = plan({file, "--format", "sarif"});
  CHECK(r.exit_code == 2);  // refused, and the log still written
  test::TempDir dir("ih-plan-sarif");
  const auto log = dir.path / "plan.sarif";
  std::ofstream(log) << r.out;
  RunOptions o;
  o.deadline = std::chrono::seconds(60);
  auto v =
      run_command({"/usr/bin/python3", test::source_dir() + "/tests/unit/report_formats.py", "sarif",
                   test::source_dir() + "/tests/fixtures/sarif/sarif-2.1.0-rules.schema.json", log.string()},
                  o);
  REQUIRE(v.has_value());
  INFO("validator: " << v->err);
  REQUIRE(v->ok());
  const auto results = lines_of(v->out);
  REQUIRE(results.size() == 2);
  const auto refused = nlohmann::json::parse(results[0]), risk = nlohmann::json::parse(results[1]);
  CHECK(refused["ruleId"] == "plan.refused");
  CHECK(refused["level"] == "error");
  CHECK(refused["uri"] == file);
  CHECK(refused["line"] == 15);
  CHECK(risk["ruleId"] == "gpu_without_syscall_boundary");
  CHECK(risk["level"] == "warning");
  CHECK(risk["uri"] == file);
  CHECK(risk["line"] == 19);
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["version"] == "2.1.0");
  CHECK(doc["runs"][0]["tool"]["driver"]["rules"].size() == 2);  // one rule per kind of finding
}
