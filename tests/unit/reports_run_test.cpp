// The run's page (report.html), its SARIF log and its OpenMetrics text, from the run-page
// fixture (one failure, one unwitnessed check, one accepted risk, the night before). SARIF is
// checked against the OASIS schema and the metrics with the OpenMetrics parser, both through
// tests/unit/report_formats.py (Debian's python3-jsonschema and python3-prometheus-client).
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "harness/common/subprocess.h"
#include "reports/reports.h"
#include "tests/support/test_support.h"
#include "tests/unit/reports_fixture.h"

using namespace isoharness;
namespace fs = std::filesystem;

namespace {

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + what.size())) ++n;
  return n;
}

// The part of the page from the element with this id to the next <h2.
std::string section(const std::string& html, const std::string& id) {
  const auto at = html.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const auto end = html.find("<h2", at);
  return html.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

std::vector<nlohmann::json> python_lines(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/python3", test::source_dir() + "/tests/unit/report_formats.py"};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions opts;
  opts.deadline = std::chrono::seconds(60);
  auto r = run_command(argv, opts);
  REQUIRE(r);
  INFO("stderr: " << r->err);
  REQUIRE(r->ok());
  std::vector<nlohmann::json> out;
  std::size_t start = 0;
  for (auto nl = r->out.find('\n'); nl != std::string::npos; start = nl + 1, nl = r->out.find('\n', start))
    out.push_back(nlohmann::json::parse(r->out.substr(start, nl - start)));
  return out;
}

}  // namespace

TEST_CASE("report.html matches the approved page", "[reports]") {
  const auto f = test::run_page_fixture();
  CHECK(test::matches_golden("report", "html", reports::render_run_html(f.current, f.previous),
                             f.current["context"]));
}

TEST_CASE("report.html: summary counts, a matrix cell per sandbox and family in colour and word",
          "[reports]") {
  const auto f = test::run_page_fixture();
  const std::string html = reports::render_run_html(f.current, f.previous);
  CHECK(html.find("verdict: fail") != std::string::npos);
  const std::string counts = section(html, "counts");
  CHECK(counts.find("<b>1 unwitnessed</b>") != std::string::npos);
  CHECK(counts.find("<b>1 self-reported</b>") != std::string::npos);
  CHECK(counts.find("1 fail") != std::string::npos);
  const std::string matrix = section(html, "matrix");
  CHECK(occurrences(matrix, "<tr><th>") == 1 + 4);      // the header, then one row per sandbox
  CHECK(occurrences(matrix, "<th class=\"f\">") == 7);  // kernel … host_reached, read_only_root
  CHECK(occurrences(matrix, "<td class=\"m fail\" title=\"egress: fail\">fail</td>") == 1);
  // egress and egress:metadata are one family: its unwitnessed check makes the cell unwitnessed.
  CHECK(occurrences(matrix, ">unwitnessed</td>") == 1);
  CHECK(occurrences(matrix, "<td class=\"m na\" title=\"read_only_root: n/a\">n/a</td>") == 1);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find(" src=") == std::string::npos);
  CHECK(html.find("@media print") != std::string::npos);
}

TEST_CASE("report.html: since the last run lists new failures, fixed checks, new n/a and times",
          "[reports]") {
  const auto f = test::run_page_fixture();
  const std::string html = reports::render_run_html(f.current, f.previous);
  const std::string since = section(html, "since");
  REQUIRE_FALSE(since.empty());
  CHECK(since.find("20261128-020002-77aa") != std::string::npos);
  CHECK(since.find("New failures (1)") != std::string::npos);
  CHECK(since.find("bridge-iclr · runc / tier · attempt 1</td><td><code>egress</code>") != std::string::npos);
  CHECK(since.find("Fixed checks (1)") != std::string::npos);
  CHECK(since.find("strict-main · gvisor / non-tier · attempt 1</td><td><code>kernel</code>") !=
        std::string::npos);
  CHECK(since.find("New n/a (1)") != std::string::npos);
  CHECK(since.find("<code>read_only_root</code>") != std::string::npos);
  CHECK(since.find("Harness time per item (4 in both runs)") != std::string::npos);
  CHECK(since.find("<td>20.5 s</td><td>30.5 s</td><td>+10 s (+49 %)</td>") != std::string::npos);
  // Without a previous run there is no such section; a broken one is named, not rendered.
  CHECK(reports::render_run_html(f.current).find("id=\"since\"") == std::string::npos);
  const std::string broken = reports::render_run_html(f.current, nlohmann::json{{"schema", "x"}});
  CHECK(section(broken, "since").find("could not be read") != std::string::npos);
}

TEST_CASE("report.html: failed and unwitnessed checks with both sides, escaped and bounded", "[reports]") {
  auto f = test::run_page_fixture();
  auto& check = f.current["sandboxes"][3]["checks"][2];
  REQUIRE(check["status"] == "fail");
  check["evidence"] = "<script>alert(1)</script>" + std::string(20000, 'x');
  check["observed"] = "<img src=x onerror=alert(1)>";
  const std::string html = reports::render_run_html(f.current);
  const std::string failed = section(html, "fail");
  CHECK(failed.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(failed.find("&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
  CHECK(html.find("<script>") == std::string::npos);
  CHECK(failed.size() < 6000);  // evidence cut to 3000 bytes
  CHECK(failed.find("expected") != std::string::npos);
  CHECK(failed.find("reason") != std::string::npos);
  const std::string unwitnessed = section(html, "unwitnessed");
  CHECK(unwitnessed.find("egress:metadata") != std::string::npos);
  CHECK(unwitnessed.find("the witness recorded nothing") != std::string::npos);
  const std::string risks = section(html, "risks");
  CHECK(risks.find("accepted risk") != std::string::npos);
  CHECK(risks.find("known_risk.gpu_runtime") != std::string::npos);
  CHECK(risks.find("asks for a GPU") != std::string::npos);
}

TEST_CASE("write_all writes report.html, and SARIF and metrics where the inputs say", "[reports]") {
  test::TempDir dir("ih-reports-run");
  const auto f = test::run_page_fixture();
  reports::ReportInputs inputs{f.previous, (dir.path / "run.sarif").string(),
                               (dir.path / "m" / "run.prom").string()};
  fs::create_directories(dir.path / "m");
  const auto written = reports::write_all(f.current, (dir.path / "out").string(), inputs);
  CHECK(written.size() == 6);
  CHECK(test::read_text((dir.path / "out" / "report.html").string()).find("id=\"since\"") !=
        std::string::npos);
  CHECK(fs::exists(dir.path / "run.sarif"));
  CHECK(test::read_text((dir.path / "m" / "run.prom").string()).ends_with("# EOF\n"));
}

namespace {
// The schema the SARIF logs are validated against: ours (tests/fixtures/sarif/README.md), or
// the OASIS file itself where ISOHARNESS_SARIF_SCHEMA names a copy of it.
std::string sarif_schema() {
  const char* given = std::getenv("ISOHARNESS_SARIF_SCHEMA");
  return given && *given ? std::string(given)
                         : test::source_dir() + "/tests/fixtures/sarif/sarif-2.1.0-rules.schema.json";
}
}  // namespace

TEST_CASE("a run's SARIF passes the SARIF 2.1.0 schema, each finding at its item's line",
          "[reports][formats]") {
  test::TempDir dir("ih-reports-sarif");
  const auto f = test::run_page_fixture();
  const fs::path file = dir.path / "run.sarif";
  std::ofstream(file) << reports::render_sarif(reports::sarif_findings(f.current), "0.1.0");
  const auto results = python_lines({"sarif", sarif_schema(), file.string()});
  REQUIRE(results.size() == 3);
  CHECK(results[0]["ruleId"] == "check.failed");
  CHECK(results[0]["level"] == "error");
  CHECK(results[0]["uri"] == "scenarios/mixed-eval-set.yaml");
  CHECK(results[0]["line"] == 14);
  CHECK(results[1]["ruleId"] == "check.unwitnessed");
  CHECK(results[1]["level"] == "warning");
  CHECK(results[2]["ruleId"] == "known_risk.gpu_runtime");
  CHECK(results[2]["level"] == "warning");
  CHECK(results[2]["line"] == 21);
}

TEST_CASE("the schema refuses a SARIF log that breaks it", "[reports][formats]") {
  test::TempDir dir("ih-reports-sarif-bad");
  auto log = nlohmann::json::parse(reports::render_sarif({{"r", "", "fatal", "m", "a.yaml", 1, 1}}, ""));
  const fs::path file = dir.path / "bad.sarif";
  std::ofstream(file) << log.dump();
  auto r = run_command({"/usr/bin/python3", test::source_dir() + "/tests/unit/report_formats.py", "sarif",
                        sarif_schema(), file.string()});
  REQUIRE(r);
  CHECK_FALSE(r->ok());  // "fatal" is not a SARIF level
  CHECK(r->err.find("fatal") != std::string::npos);
}

TEST_CASE("the run's OpenMetrics text parses and its check counts equal the result's", "[reports][formats]") {
  test::TempDir dir("ih-reports-metrics");
  auto result = test::run_page_fixture().current;
  result["parity"] = test::parity_section_fixture();
  // A refusal record (a config the platform must refuse, which it accepted): its check counts too.
  result["sandboxes"].push_back(nlohmann::json::parse(R"({
    "id": "r1", "scenario": "refused-level-below-floor", "item_id": "refused-level-below-floor/refusal",
    "item": "", "task": "", "level": "", "runtime": "-", "node_class": "-", "attempt": 1, "error": null,
    "posture": null, "facts": {"refused": false, "sandbox_ran": false}, "timings": {"total_s": 0.5},
    "refusal": {"rule": "an item may not name a level below the eval set's", "reason": "below the eval set",
                "or_never_running": false},
    "checks": [{"control": "fail_loudly", "status": "fail", "expected": "refused", "observed": "accepted",
                "reason": "the platform accepted it", "evidence": "", "judges": []}]})"));
  const fs::path file = dir.path / "run.prom";
  std::ofstream(file) << reports::render_openmetrics(result);
  const auto samples = python_lines({"metrics", file.string()});
  std::map<std::string, double> by_status;
  double checks = 0, unwitnessed = -1, self_reported = -1, timestamp = 0, ratios = 0, total_phase = 0;
  std::map<std::string, double> verdict;
  for (const auto& s : samples) {
    const std::string name = s["name"];
    if (name == "isoharness_checks_total") {
      by_status[s["labels"]["status"]] += s["value"].get<double>();
      checks += s["value"].get<double>();
      CHECK(s["type"] == "counter");
    }
    if (name == "isoharness_checks_unwitnessed_total") unwitnessed = s["value"];
    if (name == "isoharness_checks_self_reported_total") self_reported = s["value"];
    if (name == "isoharness_run_timestamp_seconds") {
      timestamp = s["value"];
      CHECK(s["unit"] == "seconds");
    }
    if (name == "isoharness_verdict") verdict[s["labels"]["isoharness_verdict"]] = s["value"];
    if (name == "isoharness_parity_ratio") ++ratios;
    if (name == "isoharness_harness_phase_seconds" && s["labels"]["phase"] == "total")
      total_phase = s["value"];
  }
  int pass = 0, fail = 0, na = 0, unw = 0, all = 0;
  for (const auto& sb : result["sandboxes"])
    for (const auto& c : sb["checks"]) {
      ++all;
      pass += c["status"] == "pass";
      fail += c["status"] == "fail";
      na += c["status"] == "n/a";
      unw += c["status"] == "unwitnessed";
    }
  CHECK(checks == all);
  CHECK(by_status["pass"] == pass);
  CHECK(by_status["fail"] == fail);
  CHECK(by_status["n/a"] == na);
  CHECK(by_status["unwitnessed"] == unw);
  CHECK(unwitnessed == 1);
  CHECK(self_reported == 1);
  CHECK(timestamp == Approx(1795917821.0));  // 2026-11-29T02:03:41Z
  CHECK(verdict["fail"] == 1);
  CHECK(verdict["pass"] == 0);
  CHECK(total_phase == Approx(41.5 + 38.25 + 22.0 + 30.5));
  CHECK(ratios > 0);
  CHECK(ratios == Approx(3 * std::floor(ratios / 3)));  // estimate, low and high of each
}
