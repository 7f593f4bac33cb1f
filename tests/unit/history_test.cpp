#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "harness/common/error.h"
#include "harness/history/history.h"

using namespace isoharness;
using nlohmann::json;

namespace {

struct TempDb {
  std::string dir;
  TempDb() {
    char tmpl[] = "/tmp/isoharness-history-test-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~TempDb() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string path() const { return dir + "/h.sqlite"; }
};

json parity_result(const std::string& id, const std::string& started, double getpid_scale) {
  json samples = json::object();
  for (int i = 0; i < 12; ++i) {
    double jitter = 1.0 + 0.01 * ((i * 7) % 5);
    samples["gvisor/tier"]["getpid"].push_back(40e-6 * getpid_scale * jitter);
    samples["gvisor/tier"]["cpu_hash"].push_back(2e-3 * jitter);
  }
  return {{"schema", "isoharness.result/v1"},
          {"context", {{"started", started}, {"git_revision", "abc"}, {"host", "vm"}}},
          {"run", {{"id", id}}},
          {"parity", {{"samples", samples}}},
          {"summary", {{"verdict", "pass"}}}};
}

json posture_result(const std::string& id, const std::string& started, const std::string& sysrq) {
  json checks = {{{"control", "kernel"}, {"status", "pass"}}, {{"control", "sysrq"}, {"status", sysrq}}};
  return {{"schema", "isoharness.result/v1"},
          {"context", {{"started", started}}},
          {"run", {{"id", id}}},
          {"sandboxes",
           {{{"scenario", "strict"}, {"item_id", "t/0"}, {"runtime", "runc"}, {"node_class", "tier"}, {"attempt", 1},
             {"checks", checks}}}},
          {"summary", {{"verdict", sysrq == "pass" ? "pass" : "fail"}}}};
}

}  // namespace

TEST_CASE("history records runs and lists them newest first", "[history]") {
  TempDb t;
  history::Database db(t.path());
  db.record(parity_result("n1", "2026-11-27T02:00:00Z", 1.0));
  db.record(parity_result("n2", "2026-11-28T02:00:00Z", 1.0));
  db.record(parity_result("n2", "2026-11-28T02:00:00Z", 1.0));  // the same run again replaces it
  auto runs = db.runs();
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].id == "n2");
  CHECK(runs[0].kind == "parity");
  CHECK_THROWS_AS(db.record(json{{"schema", "other"}}), UserError);
}

TEST_CASE("timing drift: a slower night is drift, a steady one is not", "[history]") {
  TempDb t;
  history::Database db(t.path());
  db.record(parity_result("n1", "2026-11-26T02:00:00Z", 1.0));
  db.record(parity_result("n2", "2026-11-27T02:00:00Z", 1.0));
  db.record(parity_result("n3", "2026-11-28T02:00:00Z", 1.0));
  auto steady = db.drift(7, 1.10);
  CHECK(steady["run"] == "n3");
  REQUIRE(steady["timings"].size() == 2);
  for (const auto& w : steady["timings"]) CHECK_FALSE(w["drift"].get<bool>());

  db.record(parity_result("n4", "2026-11-29T02:00:00Z", 1.5));  // getpid 50 % slower tonight
  auto d = db.drift(7, 1.10);
  bool getpid_drift = false, cpu_drift = false;
  for (const auto& w : d["timings"]) {
    if (w["workload"] == "getpid") getpid_drift = w["drift"].get<bool>();
    if (w["workload"] == "cpu_hash") cpu_drift = w["drift"].get<bool>();
  }
  CHECK(getpid_drift);
  CHECK_FALSE(cpu_drift);
  CHECK(history::drift_to_text(d).find("DRIFT") != std::string::npos);
}

TEST_CASE("posture drift: a control that passed and now fails", "[history]") {
  TempDb t;
  history::Database db(t.path());
  db.record(posture_result("p1", "2026-11-27T02:00:00Z", "pass"));
  CHECK(db.drift(7, 1.1).contains("note"));  // nothing to compare with yet
  db.record(posture_result("p2", "2026-11-28T02:00:00Z", "fail"));
  auto d = db.drift(7, 1.1);
  REQUIRE(d["posture"].size() == 1);
  CHECK(d["posture"][0]["control"] == "sysrq");
  db.record(posture_result("p3", "2026-11-29T02:00:00Z", "fail"));
  CHECK(db.drift(7, 1.1)["posture"].empty());  // it already failed the night before
}
