// reports/: the renderers against golden files and against what a reader relies on
// (escaping, self-contained HTML, compare.py's fields, every file written, bad input named).
#include "reports/reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "harness/common/error.h"
#include "tests/support/test_support.h"
#include "tests/unit/reports_fixture.h"

using namespace isoharness;
using namespace isoharness::reports;
namespace fs = std::filesystem;

namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + what.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("Markdown and JUnit of the result document match the approved files", "[reports]") {
  const auto result = test::result_fixture();
  const auto& ctx = result["context"];
  CHECK(test::matches_golden("report", "md", render_markdown(result), ctx));
  CHECK(test::matches_golden("junit", "xml", render_junit(result), ctx));
  const auto with_parity = test::result_with_parity_fixture();
  CHECK(test::matches_golden("report_parity", "md", render_markdown(with_parity), ctx));
  CHECK(test::matches_golden("junit_parity", "xml", render_junit(with_parity), ctx));
  CHECK(test::matches_golden("parity", "md", render_parity_markdown(with_parity["parity"], ctx), ctx));
  CHECK(test::matches_golden("parity", "html", render_parity_html(with_parity["parity"], ctx), ctx));
}

TEST_CASE("Markdown summary shows the verdict, the failure with its evidence, risks and n/a", "[reports]") {
  const auto md = render_markdown(test::result_fixture());
  CHECK_THAT(md, Catch::StartsWith("## ❌ isoharness: FAIL — 1 of 18 checks failed"));
  CHECK_THAT(md, Catch::Contains("**4 sandboxes · 18 checks · 16 pass · 1 fail · 1 n/a · 0 errors**"));
  CHECK_THAT(md, Catch::Contains("#### ❌ `egress` — mixed-eval-set · bridge-iclr · runc / tier · attempt 1"));
  // Evidence sits in a code block, literally; table cells escape pipes.
  CHECK_THAT(md, Catch::Contains("<- | pipes & <tags> kept literally"));
  CHECK_THAT(md, Catch::Contains("known_risk.gpu_runtime"));
  CHECK_THAT(md, Catch::Contains("`read_only_root` — read_only_root was not requested"));
  CHECK(md.size() < 64 * 1024);
}

TEST_CASE("Markdown counts egress checks judged by a witness and by the sandbox's own report", "[reports]") {
  auto r = test::result_fixture();
  CHECK(render_markdown(r).find("### Egress: who judged") ==
        std::string::npos);  // a result that says neither
  const auto egress = [](const char* control, nlohmann::json judges, bool self, const char* evidence) {
    nlohmann::json c = {{"control", control},         {"status", "pass"},       {"expected", "blocked"},
                        {"observed", "blocked"},      {"reason", "as planned"}, {"evidence", evidence},
                        {"judges", std::move(judges)}};
    if (self) c["self_reported"] = true;
    return c;
  };
  r["sandboxes"][0]["checks"].push_back(
      egress("egress:canary-tcp", {"witness", "drop point"}, false,
             "judged by the witness: the operator's witness (...)\nrecords"));
  r["sandboxes"][1]["checks"].push_back(
      egress("egress:canary-tcp", {"sandbox report"}, true,
             "judged by the sandbox's own report (no outside witness in this deployment)\ntargets: ..."));
  r["sandboxes"][2]["checks"].push_back(
      egress("egress:canary-udp", {"sandbox report"}, true,
             "judged by the sandbox's own report (no outside witness in this deployment)\ntargets: ..."));
  r["sandboxes"][3]["checks"].push_back(
      egress("egress:metadata", {"sandbox report"}, true,
             "judged by the sandbox's own report (the witness does not cover this target)\ntargets: ..."));
  // The words alone count nothing: a check with the wording but neither field, and a
  // posture check marked self-reported, are not egress checks judged by anyone here.
  r["sandboxes"][3]["checks"].push_back(
      egress("egress:blocked", nlohmann::json::array(), false, "judged by the witness: (words only)\n"));
  r["sandboxes"][3]["checks"].push_back(egress("capabilities", {"posture"}, true, ""));
  const auto md = render_markdown(r);
  CHECK_THAT(md, Catch::Contains("### Egress: who judged (1 witnessed · 3 sandbox-reported)"));
  CHECK_THAT(md, Catch::Contains("  - no outside witness in this deployment: 2\n"));
  CHECK_THAT(md, Catch::Contains("  - the witness does not cover this target: 1\n"));
}

TEST_CASE("Markdown evidence cannot break out of its code block", "[reports]") {
  auto r = test::result_fixture();
  r["sandboxes"][3]["checks"][2]["evidence"] = "```\n# injected heading\n````";
  const auto md = render_markdown(r);
  CHECK_THAT(md, Catch::Contains("`````text\n```\n# injected heading\n````\n`````"));
  r["sandboxes"][3]["checks"][2]["evidence"] = std::string(100000, 'x');
  CHECK_THAT(render_markdown(r), Catch::Contains("more bytes)"));
}

TEST_CASE("Markdown: sandbox text makes no link or image, and its reason is bounded", "[reports]") {
  auto r = test::result_fixture();
  auto& check = r["sandboxes"][3]["checks"][2];
  REQUIRE(check["status"] == "fail");
  check["observed"] = "![pixel](https://tracker.example.com/p.png) [click](https://phish.example.com)";
  check["reason"] = "see [here][1]\n\n[1]: https://phish.example.com " + std::string(20000, 'r');
  const auto md = render_markdown(r);
  // Every bracket is escaped: no "[text](url)", "![alt](url)" or "[text][ref]" is left.
  CHECK(md.find("[click](") == std::string::npos);
  CHECK(md.find("[pixel](") == std::string::npos);
  CHECK(md.find("[here][1]") == std::string::npos);
  CHECK_THAT(md, Catch::Contains("\\[click\\](https://phish.example.com)"));
  CHECK_THAT(md, Catch::Contains("!\\[pixel\\](https://tracker.example.com/p.png)"));
  CHECK(md.find(std::string(1001, 'r')) == std::string::npos);
  CHECK_THAT(md, Catch::Contains("more bytes)"));
}

TEST_CASE("JUnit has one testcase per check, failures with expected/observed/evidence", "[reports]") {
  auto r = test::result_fixture();
  r["sandboxes"][0]["checks"][0]["evidence"] = std::string("bell\x07 and <b>&amp;</b>");
  r["sandboxes"][1]["error"] = "could not deploy: runsc create: exit 1";
  const auto xml = render_junit(r);
  CHECK(count_of(xml, "<testcase ") == 18 + 1);
  CHECK_THAT(xml, Catch::Contains(
                      R"(<testsuites name="isoharness" tests="19" failures="1" errors="1" skipped="1")"));
  CHECK_THAT(
      xml,
      Catch::Contains(
          R"(<failure type="egress" message="expected {&quot;allow_domains&quot;:[],&quot;egress_allowed&quot;:false}, observed {&quot;connected&quot;:[&quot;world-blocked 203.0.113.20:443&quot;]}">)"));
  CHECK_THAT(xml, Catch::Contains("&lt;- | pipes &amp; &lt;tags&gt; kept literally"));
  CHECK_THAT(xml,
             Catch::Contains(
                 R"(<skipped message="not applicable: read_only_root was not requested for this item"/>)"));
  CHECK_THAT(xml, Catch::Contains("<error message=\"could not deploy: runsc create: exit 1\">"));
  CHECK_THAT(xml,
             Catch::Contains(R"(<property name="finding" value="known_risk.gpu_runtime [gpu-trainer]: )"));
  CHECK(xml.find('\x07') == std::string::npos);
  CHECK(count_of(xml, "<testsuite ") == count_of(xml, "</testsuite>"));
  CHECK(count_of(xml, "<testcase ") == count_of(xml, "</testcase>") + count_of(xml, "time=\"0\"/>"));
}

TEST_CASE("an unwitnessed check is an error in JUnit and a section of its own in the summary", "[reports]") {
  auto r = test::result_fixture();
  r["sandboxes"][0]["checks"][0]["status"] = "unwitnessed";
  r["sandboxes"][0]["checks"][0]["reason"] = "egress: canary-tcp unwitnessed (rule B5): no drop record";
  r["summary"]["verdict"] = "error";
  const auto xml = render_junit(r);
  CHECK_THAT(xml, Catch::Contains(R"(<error type="unwitnessed" message="unwitnessed: egress: canary-tcp)"));
  CHECK_THAT(xml, Catch::Contains(R"(<testsuites name="isoharness" tests="18" )") &&
                      Catch::Contains(R"(errors="1" skipped=)"));
  const auto md = render_markdown(r);
  CHECK_THAT(md, Catch::StartsWith("## ⚠️ isoharness: error — 1 check(s) unwitnessed"));
  CHECK_THAT(md, Catch::Contains(" · 1 unwitnessed · 0 errors**"));
  CHECK_THAT(md, Catch::Contains("### Unwitnessed (1): the evidence these checks need is missing"));
  CHECK_THAT(md, Catch::Contains("(rule B5): no drop record"));
}

TEST_CASE("JUnit carries parity verdicts: the mix decides, workloads are reported", "[reports]") {
  const auto r = test::result_with_parity_fixture();
  const auto xml = render_junit(r);
  int regressions = 0, inconclusive = 0, cases = 0;
  for (const auto& cell : r["parity"]["cells"]) {
    regressions += cell["mix"]["verdict"] == "regression";
    inconclusive += cell["mix"]["verdict"] == "inconclusive";
    cases += 1 + static_cast<int>(cell["comparisons"].size());
  }
  REQUIRE(regressions > 0);
  CHECK(count_of(xml, "<failure type=\"parity\"") == static_cast<std::size_t>(regressions));
  CHECK(count_of(xml, "<testcase classname=\"parity.") == static_cast<std::size_t>(cases));
  CHECK(count_of(xml, "<skipped message=\"") ==
        static_cast<std::size_t>(inconclusive) + 1);  // + the n/a check
  CHECK_THAT(
      xml,
      Catch::Contains(
          "<system-out>gvisor/tier vs runc/tier: ratio 39.3 [38.2, 41.3], tolerance 1.10: ❌ regression"));
}

TEST_CASE("the parity page is self-contained and shows a chart per cell", "[reports]") {
  const auto r = test::result_with_parity_fixture();
  const auto html = render_parity_html(r["parity"], r["context"]);
  CHECK_THAT(html, Catch::StartsWith("<!DOCTYPE html>"));
  CHECK(count_of(html, "<svg ") == r["parity"]["cells"].size() + 1);  // a forest per cell + distributions
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("href=") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(html.find("url(") == std::string::npos);
  // The only URL is the SVG namespace name, which is never fetched.
  CHECK(count_of(html, "http") == count_of(html, "http://www.w3.org/2000/svg"));
  CHECK_THAT(html, Catch::Contains("tolerance 1.10<"));
  CHECK_THAT(html, Catch::Contains("Human-baseline validity"));
}

TEST_CASE("parity Markdown lists every workload with n, ratio, CI, p, verdict, tolerance", "[reports]") {
  const auto r = test::result_with_parity_fixture();
  const auto md = render_parity_markdown(r["parity"]);
  CHECK_THAT(md, Catch::Contains(
                     "| workload | n (baseline / candidate) | ratio | 95 % CI | p | verdict | tolerance |"));
  CHECK_THAT(md, Catch::Contains("## gvisor/tier vs runc/tier"));
  CHECK(count_of(md, "| getpid | 12 / 12 |") == 3);
}

TEST_CASE("the getpid cross-check appears in both parity reports when the run made one", "[reports]") {
  auto r = test::result_with_parity_fixture();
  CHECK(render_parity_markdown(r["parity"]).find("getpid cross-check") == std::string::npos);
  r["parity"]["getpid_crosscheck"] = {
      {{"cell", "gvisor/tier"}, {"isoprobe_ratio", 292.4}, {"static_ratio", 288.1}, {"agreement", 1.0149}}};
  const auto md = render_parity_markdown(r["parity"]);
  CHECK_THAT(md, Catch::Contains("## getpid cross-check"));
  CHECK_THAT(md, Catch::Contains("| gvisor/tier | 292 | 288 | 1.015 |"));
  const auto html = render_parity_html(r["parity"], r["context"]);
  CHECK_THAT(html, Catch::Contains("<tr><td>gvisor/tier</td><td>292</td><td>288</td><td>1.015</td></tr>"));
}

TEST_CASE("per-cell Google Benchmark JSON has what compare.py reads", "[reports]") {
  const auto r = test::result_with_parity_fixture();
  const auto cells = render_benchmark_cells(r["parity"], r["context"]);
  REQUIRE(cells.size() == 4);
  REQUIRE(cells.count("strict.gvisor_non-tier.json"));
  const auto& doc = cells.at("strict.runc_tier.json");
  CHECK(doc["context"]["isoharness_cell"] == "runc/tier");
  const auto& samples = r["parity"]["samples"]["runc/tier"];
  std::size_t expected = 0;
  for (const auto& [w, times] : samples.items()) expected += times.size();
  REQUIRE(doc["benchmarks"].size() == expected);
  for (const auto& b : doc["benchmarks"]) {
    for (const char* key :
         {"name", "run_type", "real_time", "cpu_time", "time_unit", "iterations", "repetitions"}) {
      CHECK(b.contains(key));
    }
    CHECK(b["run_type"] == "iteration");
    CHECK(b["time_unit"] == "ns");
  }
  const auto& first = doc["benchmarks"][0];
  CHECK(first["real_time"].get<double>() ==
        Approx(samples[first["name"].get<std::string>()][0].get<double>() * 1e9));
}

TEST_CASE("write_all writes every file, parity files only with a parity section", "[reports]") {
  test::TempDir dir("ih-reports-test");
  const auto plain = write_all(test::result_fixture(), (dir.path / "plain").string());
  CHECK(plain.size() == 4);
  for (const char* f : {"result.json", "report.md", "report.html", "junit.xml"})
    CHECK(fs::exists(dir.path / "plain" / f));
  CHECK_FALSE(fs::exists(dir.path / "plain" / "parity.html"));
  const auto back = nlohmann::json::parse(test::read_text((dir.path / "plain" / "result.json").string()));
  CHECK(back == test::result_fixture());

  const auto full = write_all(test::result_with_parity_fixture(), (dir.path / "full").string());
  CHECK(full.size() == 4 + 2 + 4);
  CHECK(fs::file_size(dir.path / "full" / "parity.html") > 10000);
  CHECK(fs::exists(dir.path / "full" / "cells" / "strict.gvisor_tier.json"));
  for (const auto& entry : fs::directory_iterator(dir.path / "full")) {
    CHECK(entry.path().string().find(".tmp-") == std::string::npos);
  }

  // An output path below a regular file cannot be created: a clear error naming it.
  std::ofstream(dir.path / "file") << "x";
  CHECK_THROWS_WITH(write_all(test::result_fixture(), (dir.path / "file" / "out").string()),
                    Catch::Contains("cannot create the output directory") && Catch::Contains("file/out"));
}

TEST_CASE("a malformed result document is refused with every problem named", "[reports]") {
  auto r = test::result_fixture();
  r["schema"] = "isoharness.result/v2";
  r["sandboxes"][1]["checks"][0]["status"] = "maybe";
  r["sandboxes"][2].erase("runtime");
  r["findings"][0].erase("message");
  try {
    (void)render_markdown(r);
    FAIL("no error");
  } catch (const UserError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("$.schema: 'isoharness.result/v2' is not isoharness.result/v1"));
    CHECK_THAT(msg, Catch::Contains(
                        "$.sandboxes[1].checks[0].status: 'maybe' is not pass, fail, n/a or unwitnessed"));
    CHECK_THAT(msg, Catch::Contains("$.sandboxes[2].runtime: missing"));
    CHECK_THAT(msg, Catch::Contains("$.findings[0].message: missing"));
  }
  auto p = test::result_with_parity_fixture();
  p["parity"]["samples"]["runc/tier"]["getpid"][0] = -1;
  CHECK_THROWS_WITH(render_junit(p), Catch::Contains("$.parity.samples.runc/tier.getpid"));
  CHECK_THROWS_AS(render_junit(nlohmann::json::array()), UserError);
}

TEST_CASE("reports list sandboxes by scenario, item, runtime, node class, attempt", "[reports]") {
  const auto result = test::result_fixture();
  auto shuffled = result;
  std::reverse(shuffled["sandboxes"].begin(), shuffled["sandboxes"].end());
  CHECK(render_markdown(shuffled) == render_markdown(result));
  CHECK(render_junit(shuffled) == render_junit(result));
  const auto md = render_markdown(result);
  std::vector<std::string> rows;
  for (const auto& sb : result["sandboxes"])
    rows.push_back(fmt::format("| {} | {} | {} / {} | {} |", sb["scenario"].get<std::string>(),
                               sb["item_id"].get<std::string>(), sb["runtime"].get<std::string>(),
                               sb["node_class"].get<std::string>(), sb["attempt"].get<int>()));
  std::vector<std::string> sorted = rows;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::size_t> at;
  for (const auto& r : sorted) at.push_back(md.find(r));
  for (std::size_t i = 0; i < at.size(); ++i) {
    INFO(sorted[i]);
    CHECK(at[i] != std::string::npos);
    if (i > 0) CHECK(at[i - 1] < at[i]);
  }
}

TEST_CASE("a parity cell without a weighted mix says so", "[reports]") {
  auto result = test::result_with_parity_fixture();
  auto& mix = result["parity"]["cells"][0]["mix"];
  mix["verdict"] = "no_mix";
  mix["slowdown"] = nullptr;
  mix["weights"] = nlohmann::json::object();
  const auto md = render_parity_markdown(result["parity"], result["context"]);
  CHECK_THAT(md,
             Catch::Contains("no weighted mix") && Catch::Contains("none (every timed workload weighs 0)"));
  CHECK_THAT(render_markdown(result), Catch::Contains("no weighted mix"));
  CHECK_THAT(render_parity_html(result["parity"], result["context"]), Catch::Contains("no weighted mix"));
  CHECK_THAT(render_junit(result), Catch::Contains("no weighted mix"));
}

namespace {

// A refusal scenario's record as harness/runner/refusal.cc journals it.
nlohmann::json refusal_record(const std::string& scenario, const std::string& rule, const std::string& reason,
                              bool refused, const std::string& message, const std::string& status,
                              const std::string& check_reason) {
  nlohmann::json sb = {
      {"id", "r-" + scenario},
      {"scenario", scenario},
      {"item_id", scenario + "/refusal"},
      {"task", ""},
      {"item", ""},
      {"level", ""},
      {"runtime", "-"},
      {"node_class", "-"},
      {"attempt", 1},
      {"refusal", {{"rule", rule}, {"reason", reason}, {"or_never_running", false}}},
      {"facts", {{"refused", refused}, {"refusal_message", message}, {"sandbox_ran", false}}},
      {"posture", nullptr},
      {"checks", nlohmann::json::array()},
      {"error", nullptr}};
  if (!status.empty()) {
    sb["checks"].push_back({{"control", "fail_loudly"},
                            {"status", status},
                            {"expected", "refused with an Error: message naming '" + reason + "'"},
                            {"observed", refused ? message : "accepted: " + message},
                            {"reason", check_reason},
                            {"evidence", ""}});
  }
  return sb;
}

// The fixture plus four refusal scenarios: refused (pass), accepted (fail), accepted and never
// running (pass), and one that could not be submitted (error).
nlohmann::json result_with_refusals() {
  auto r = test::result_fixture();
  r["sandboxes"].push_back(refusal_record(
      "refused-unknown-level", "an unknown isolation level is refused", "unknown isolation level", true,
      "Error: unknown isolation level 'paranoid'", "pass", "refused as required"));
  r["sandboxes"].push_back(refusal_record(
      "refused-strict-allow-all-cidr", "an all-addresses CIDR is refused under strict", "strict refuses",
      false, "eval hs-4k2p9q was started", "fail",
      "fail_loudly: the platform accepted 'refused-strict-allow-all-cidr', a config it must refuse (eval "
      "hs-4k2p9q was started); a weaker sandbox would have run. The eval was deleted at once."));
  r["sandboxes"].push_back(refusal_record("refused-non-root-on-root-image", "non_root on a root image",
                                          "root", false, "eval hs-77aa01 was started", "pass",
                                          "accepted, but its sandbox never ran"));
  auto errored =
      refusal_record("refused-level-below-floor", "below the floor", "below the eval set", false, "", "", "");
  errored["error"] = "submitting a config that must be refused: hawk timed out after 120 s";
  r["sandboxes"].push_back(errored);
  r["summary"]["verdict"] = "error";
  return r;
}

}  // namespace

TEST_CASE("Markdown: a 'Refused as required' row per refusal scenario, kept out of the sandbox table",
          "[reports]") {
  const auto md = render_markdown(result_with_refusals());
  CHECK_THAT(md, Catch::Contains("### Refused as required (2 of 4)"));
  CHECK_THAT(md, Catch::Contains("| scenario | rule · reason expected | the platform answered | verdict |"));
  CHECK_THAT(
      md, Catch::Contains("| refused-unknown-level | an unknown isolation level is refused · refused with an "
                          "Error: message naming 'unknown isolation level' | Error: unknown isolation level "
                          "'paranoid' | ✅ refused |"));
  CHECK_THAT(
      md, Catch::Contains("| refused-strict-allow-all-cidr | an all-addresses CIDR is refused under strict · "
                          "refused with an Error: message naming 'strict refuses' | eval hs-4k2p9q was "
                          "started | ❌ accepted |"));
  CHECK_THAT(md, Catch::Contains("| eval hs-77aa01 was started | ✅ accepted, never ran |"));
  CHECK_THAT(md, Catch::Contains(
                     "| submitting a config that must be refused: hawk timed out after 120 s | ⚠️ could "
                     "not be submitted |"));
  // The failure is listed with the others, under the scenario's name; the sandbox table and
  // its count hold only sandboxes.
  CHECK_THAT(md,
             Catch::Contains("#### ❌ `fail_loudly` — refused-strict-allow-all-cidr · a config the platform "
                             "must refuse"));
  CHECK_THAT(md,
             Catch::Contains("**4 sandboxes · 4 refusal scenarios · 21 checks · 18 pass · 2 fail · 1 n/a · 1 "
                             "errors**"));
  CHECK_THAT(md, !Catch::Contains("| refused-unknown-level | refused-unknown-level/refusal |"));
  // Without refusal records there is no such section.
  CHECK_THAT(render_markdown(test::result_fixture()), !Catch::Contains("Refused as required"));
}

TEST_CASE("JUnit: one testcase per refusal scenario, the failure naming what was accepted", "[reports]") {
  const auto xml = render_junit(result_with_refusals());
  CHECK(count_of(xml, "<testcase classname=\"refused.") == 4);
  CHECK_THAT(xml,
             Catch::Contains(
                 R"(<testsuite name="refused as required" tests="4" failures="1" errors="1" skipped="0")"));
  CHECK_THAT(xml, Catch::Contains(R"(<testcase classname="refused.refused-unknown-level" )"
                                  R"(name="refused-unknown-level: fail_loudly" time="0"/>)"));
  CHECK_THAT(
      xml, Catch::Contains(R"(<testcase classname="refused.refused-strict-allow-all-cidr" )"
                           R"(name="refused-strict-allow-all-cidr: fail_loudly" time="0">)"
                           "\n"
                           R"(      <failure type="fail_loudly" message="fail_loudly: the platform )"
                           R"(accepted &apos;refused-strict-allow-all-cidr&apos;, a config it must refuse)"));
  CHECK_THAT(xml, Catch::Contains("the platform answered: eval hs-4k2p9q was started"));
  CHECK_THAT(xml,
             Catch::Contains(R"(<error message="submitting a config that must be refused: hawk timed out)"));
  // Counted once, in their own suite: the fixture's 18 testcases and these four.
  CHECK_THAT(xml, Catch::Contains(R"(<testsuites name="isoharness" tests="22" failures="2" errors="1")"));
  CHECK_THAT(xml, !Catch::Contains(R"(<testsuite name="refused-unknown-level")"));
  CHECK_THAT(render_junit(test::result_fixture()), !Catch::Contains("refused as required"));
}

TEST_CASE("a document written before refusal records carried their rule still lists them", "[reports]") {
  auto r = result_with_refusals();
  for (auto& sb : r["sandboxes"])
    if (sb.contains("refusal")) sb["refusal"] = true;
  CHECK_THAT(render_markdown(r),
             Catch::Contains("| refused-unknown-level | refused with an Error: message naming "
                             "'unknown isolation level' | Error: unknown isolation level"));
  CHECK(count_of(render_junit(r), "<testcase classname=\"refused.") == 4);
}

namespace {

// The parity fixture as a hawk run made with --until-decided records it: the section's
// provenance and sequential block, one cell decided at the first look (its mix judged at
// that look's confidence) and the others undecided when the round budget was spent, and a
// context whose runtime versions are the harness host's, kept apart.
nlohmann::json hawk_sequential_fixture() {
  auto r = test::result_with_parity_fixture();
  auto& s = r["parity"];
  s["provenance"] = {{"backend", "hawk"},
                     {"deployment", "staging"},
                     {"runtime", {{"runsc", "release-20260901.0"}, {"node_image", "bottlerocket-1.20"}}},
                     {"node_image", "bottlerocket-1.20"},
                     {"cells", nlohmann::json::object()},
                     {"harness_host_versions_apply", false}};
  nlohmann::json cells = nlohmann::json::object();
  bool first = true;
  for (auto& c : s["cells"]) {
    const std::string name = c["name"];
    s["provenance"]["cells"][name] = {{"node_class", "tier"},        {"runtime_class", "gvisor"},
                                      {"handler", "runsc"},          {"kernel", "Linux version 4.4.0 #1 SMP"},
                                      {"node_name", "ip-192-0-2-7"}, {"boot_id", nullptr},
                                      {"cpus_allowed", "0-1"}};
    if (first) c["mix"]["confidence"] = 0.98740838;
    cells[name] = {{"rounds", first ? 4 : 24},
                   {"decided", first},
                   {"confidence", first ? 0.98740838 : 0.99443367},
                   {"verdict", first ? c["mix"]["verdict"] : "inconclusive"}};
    first = false;
  }
  s["sequential"] = {{"spending", "pocock"},
                     {"batch", 4},
                     {"max_rounds", 24},
                     {"overall_confidence", 0.95},
                     {"looks", nlohmann::json::array()},
                     {"cells", cells}};
  r["context"]["backend"] = "hawk";
  r["context"]["harness_host"] = {{"runc", "1.1.5"}, {"runsc", "0.0~20221219"}, {"runsc_platform", "ptrace"}};
  r["context"]["runc"] = nullptr;
  r["context"]["runsc"] = "release-20260901.0";
  r["context"]["runsc_platform"] = nullptr;
  return r;
}

}  // namespace

TEST_CASE("parity reports show where the run ran and how many rounds each cell needed", "[reports]") {
  const auto r = hawk_sequential_fixture();
  const std::string first = r["parity"]["cells"][0]["name"];
  const std::string second = r["parity"]["cells"][1]["name"];
  const auto md = render_parity_markdown(r["parity"], r["context"]);
  const auto html = render_parity_html(r["parity"], r["context"]);
  for (const std::string& page : {md, html}) {
    CHECK_THAT(page, Catch::Contains("hawk backend, deployment staging, node image bottlerocket-1.20"));
    CHECK_THAT(page,
               Catch::Contains("node_image bottlerocket-1.20, runsc release-20260901.0 (as the deployment "
                               "profile declares them"));
    CHECK_THAT(page,
               Catch::Contains("Linux version 4.4.0 #1 SMP") && Catch::Contains("ip-192-0-2-7, CPUs 0-1"));
    CHECK_THAT(page, Catch::Contains("batches of 4 until each cell was decided or 24 rounds were spent"));
    CHECK_THAT(page, Catch::Contains("decided after 4 rounds") &&
                         Catch::Contains("undecided: the budget of 24 rounds was spent"));
    CHECK_THAT(page, Catch::Contains("98.7 %") && Catch::Contains("99.4 %"));
    CHECK_THAT(page, Catch::Contains("mix slowdown") && Catch::Contains("(98.7 % interval)"));
    CHECK_THAT(page,
               Catch::Contains("95 %") && Catch::Contains("two-sided: parity when the interval lies inside"));
    // The harness host's runtime versions are not the platform's: never shown.
    CHECK_THAT(page, !Catch::Contains("0.0~20221219") && !Catch::Contains("runc 1.1.5"));
    CHECK_THAT(page, Catch::Contains("harness host ci-runner-7"));
  }
  // Only the decided cell's mix was judged at its look's confidence.
  CHECK(count_of(md, "(98.7 % interval)") == 1);
  CHECK(md.find("| " + first + " | 4 | decided after 4 rounds | 98.7 % |") != std::string::npos);
  CHECK(md.find("| " + second +
                " | 24 | undecided: the budget of 24 rounds was spent | 99.4 % | inconclusive |") !=
        std::string::npos);
  // A local run's footer keeps the host's versions: there the host is the node.
  const auto local = test::result_with_parity_fixture();
  CHECK_THAT(
      render_parity_markdown(local["parity"], local["context"]),
      Catch::Contains("runc 1.1.5 · runsc 0.0~20221219") && Catch::Contains("Where it ran: not recorded"));
}
