// Provenance of parity timings: a hawk run's context and history keep no harness-host
// runtime versions; the parity section says where each cell ran and what it saw.
#include "harness/runner/parity_provenance.h"

#include <catch2/catch.hpp>

#include "harness/history/connection.h"
#include "harness/history/drift.h"
#include "harness/history/history.h"
#include "harness/history/series.h"
#include "harness/runner/context.h"
#include "reports/reports.h"
#include "tests/support/test_support.h"
#include "tests/unit/reports_fixture.h"

using namespace isoharness;

namespace {

using scenario::BackendKind;
constexpr BackendKind kHawk = BackendKind::hawk;
constexpr BackendKind kLocal = BackendKind::local;

scenario::DeploymentProfile profile(BackendKind backend, bool declared) {
  scenario::DeploymentProfile p;
  p.name = backend == kLocal ? "local" : "staging";
  p.backend = backend;
  p.runtime_handlers = {{"gvisor", "runsc"}};
  p.raw = nlohmann::json::object();
  if (declared)
    p.raw["platform"] = {{"node_image", "bottlerocket-1.20"},
                         {"runtime_versions", {{"runsc", "release-20260901.0"}, {"bad", 7}}}};
  return p;
}

nlohmann::json host_context(const std::string& backend) {
  return {{"backend", backend},         {"runc", "1.1.5"},         {"runsc", "0.0~20221219"},
          {"runsc_platform", "ptrace"}, {"runsc_network", "host"}, {"started", "2026-11-29T02:00:04Z"}};
}

nlohmann::json cell_details() {
  return nlohmann::json::array(
      {{{"cell", "runc/tier"},
        {"runtime", "runc"},
        {"node_class", "tier"},
        {"node", {{"kernel", "Linux 6.1"}, {"node_name", "ip-10-0-0-1"}, {"boot_id", "abc"}}}},
       {{"cell", "gvisor/non-tier"},
        {"runtime", "gvisor"},
        {"node_class", "non-tier"},
        {"node", {{"kernel", "Linux 4.4.0"}, {"node_name", 42}}}}});
}

}  // namespace

TEST_CASE("a hawk run's context keeps the harness host's runtime versions apart", "[parity][provenance]") {
  auto context = host_context("hawk");
  runner::separate_harness_host(context, profile(kHawk, true), kHawk);
  CHECK(context["runc"].is_null());
  CHECK(context["runsc"] == "release-20260901.0");  // declared by the profile
  CHECK(context["runsc_platform"].is_null());
  CHECK(context["node_image"] == "bottlerocket-1.20");
  CHECK(context["harness_host"]["runsc"] == "0.0~20221219");

  auto undeclared = host_context("hawk");
  runner::separate_harness_host(undeclared, profile(kHawk, false), kHawk);
  CHECK(undeclared["runsc"].is_null());

  auto local = host_context("local");
  runner::separate_harness_host(local, profile(kLocal, false), kLocal);
  CHECK(local == host_context("local"));  // the harness host is the node
}

TEST_CASE("every run's context on a deployment is the deployment's: one rule, applied once",
          "[parity][provenance][context]") {
  auto hawk = profile(kHawk, false);
  hawk.node_image = scenario::NodeImageSettings{"ubuntu-2404-eks", "1.3.3", ""};
  const auto context = runner::run_context(kHawk, "/p/staging.yaml", &hawk);
  const auto host = runner::host_context();
  INFO(context.dump(2));
  CHECK(context["runc"] == "1.3.3");  // declared by node_image:
  CHECK(context["node_image"] == "ubuntu-2404-eks");
  CHECK(context["runsc"].is_null());
  CHECK(context["kernel"].is_null());
  CHECK(context["harness_host"]["kernel"] == host["kernel"]);
  CHECK(context["harness_host"]["runsc"] == host["runsc"]);
  auto again = context;
  runner::separate_harness_host(again, hawk, kHawk);
  CHECK(again == context);  // the harness host's values are not overwritten with nulls
  const auto undeclared = runner::run_context(kHawk, "/p/staging.yaml", nullptr);
  CHECK(undeclared["runc"].is_null());
  CHECK(undeclared["harness_host"]["runc"] == host["runc"]);
  const auto local = runner::run_context(kLocal, "/p/local.yaml", nullptr);
  CHECK(local["kernel"] == host["kernel"]);  // the harness host is the node
  CHECK(local["runc"] == host["runc"]);
  CHECK_FALSE(local.contains("harness_host"));
}

TEST_CASE(
    "a hawk run recorded before the rule is read as stored and marked; its host's change is no runtime "
    "change",
    "[parity][provenance][context]") {
  auto old_a = host_context("hawk");
  auto old_b = host_context("hawk");
  old_b["runsc"] = "release-20260901.0";
  old_b["kernel"] = "Linux 6.2";
  old_a["kernel"] = "Linux 6.1";
  CHECK(history::context_of_harness_host(old_a));
  const auto d = history::context_changes(old_a, old_b);
  REQUIRE(d.size() == 2);
  CHECK(d[0]["field"] == "runsc");
  CHECK(d[0]["before"] == "0.0~20221219");  // read as stored
  CHECK(d[0]["harness_host"] == true);
  CHECK(d[0]["runtime"] == false);
  CHECK(d[0]["label"] == "runsc (harness host's)");
  CHECK(d[1]["field"] == "kernel");
  CHECK(d[1]["harness_host"] == true);
  // A context kept apart, or a local one, is not marked.
  auto kept = old_b;
  runner::separate_harness_host(kept, profile(kHawk, false), kHawk);
  CHECK_FALSE(history::context_of_harness_host(kept));
  CHECK_FALSE(history::context_of_harness_host(host_context("local")));
  auto local_b = host_context("local");
  local_b["runsc"] = "release-20260901.0";
  const auto l = history::context_changes(host_context("local"), local_b);
  REQUIRE(l.size() == 1);
  CHECK(l[0]["runtime"] == true);
  CHECK(l[0]["harness_host"] == false);

  // In the drift document: the stored run is marked.
  std::vector<history::SeriesPoint> points(2);
  for (int i = 0; i < 2; ++i) {
    points[i].series = "parity/gvisor/tier/mix";
    points[i].scenario = "parity";
    points[i].cell = "gvisor/tier";
    points[i].workload = "mix";
    points[i].run_id = i ? "r2" : "r1";
    points[i].started = i ? "2026-11-30T02:00:04Z" : "2026-11-29T02:00:04Z";
  }
  const auto drift = history::analyse_drift(points,
                                            {{"r1", points[0].started, old_a, {}, "hawk/unknown"},
                                             {"r2", points[1].started, kept, {}, "hawk/staging"}},
                                            {});
  INFO(drift["runs"].dump(2));
  REQUIRE(drift["runs"].size() == 2);
  CHECK(drift["runs"][0]["context_of_harness_host"] == true);
  CHECK(drift["runs"][1]["context_of_harness_host"] == false);
}

TEST_CASE("the parity section's provenance: deployment, runtime as observed or declared, each cell's node",
          "[parity][provenance]") {
  auto context = host_context("hawk");
  runner::separate_harness_host(context, profile(kHawk, true), kHawk);
  const auto p = runner::parity_provenance(profile(kHawk, true), kHawk, cell_details(), context);
  CHECK(p["backend"] == "hawk");
  CHECK(p["deployment"] == "staging");
  CHECK(p["runtime"] ==
        nlohmann::json({{"runsc", "release-20260901.0"}, {"node_image", "bottlerocket-1.20"}}));
  CHECK(p["harness_host_versions_apply"] == false);
  CHECK(p["cells"]["gvisor/non-tier"]["kernel"] == "Linux 4.4.0");
  CHECK(p["cells"]["gvisor/non-tier"]["handler"] == "runsc");
  CHECK(p["cells"]["gvisor/non-tier"]["node_name"].is_null());  // not text: not taken
  CHECK(p["cells"]["runc/tier"]["node_name"] == "ip-10-0-0-1");

  const auto l =
      runner::parity_provenance(profile(kLocal, false), kLocal, cell_details(), host_context("local"));
  CHECK(l["runtime"]["runsc"] == "0.0~20221219");
  CHECK(l["harness_host_versions_apply"] == true);
}

TEST_CASE("the history of a hawk run shows no harness-host runtime versions", "[parity][provenance]") {
  test::TempDir dir("ih-provenance");
  const std::string path = (dir.path / "h.sqlite").string();
  auto result = test::result_with_parity_fixture();
  result["context"] = host_context("hawk");
  runner::separate_harness_host(result["context"], profile(kHawk, false), kHawk);
  result["parity"]["provenance"] =
      runner::parity_provenance(profile(kHawk, false), kHawk, cell_details(), result["context"]);
  {
    history::Database db(path);
    db.record(result);
  }
  const history::Database db(path);
  const auto rows = db.runs(10);
  REQUIRE(rows.size() == 1);
  const std::string stored = rows[0].context.dump();
  INFO(stored);
  CHECK(rows[0].context["runsc"].is_null());
  CHECK(rows[0].context["runc"].is_null());
  // Everything a reader gets from the history: the drift document, the public view and
  // the parity page of the stored run name the host's versions nowhere but under
  // harness_host.
  const auto drift = history::analyse_drift(db, {});
  REQUIRE(drift["runs"].size() == 1);
  CHECK(drift["runs"][0]["deployment"] == "hawk/staging");
  auto shown = drift["runs"][0]["context"];
  shown.erase("harness_host");
  CHECK(shown.dump().find("0.0~20221219") == std::string::npos);
  CHECK(shown.dump().find("1.1.5") == std::string::npos);
  auto view = history::connect(path)->query("SELECT runc, runsc, runsc_platform FROM isoharness_points;");
  int rows_seen = 0;
  while (view->next()) {
    ++rows_seen;
    CHECK(view->text(0).empty());
    CHECK(view->text(1).empty());
    CHECK(view->text(2).empty());
  }
  CHECK(rows_seen > 0);
  const auto back = db.result(rows[0].id);
  for (const auto& page : {reports::render_parity_html(back["parity"], back["context"]),
                           reports::render_parity_markdown(back["parity"], back["context"])}) {
    CHECK(page.find("0.0~20221219") == std::string::npos);
    CHECK(page.find("1.1.5") == std::string::npos);
    CHECK(page.find("not declared by the deployment profile") != std::string::npos);
  }
}
