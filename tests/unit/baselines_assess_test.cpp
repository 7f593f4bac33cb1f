// Every record of the fixture's baseline file assessed against the fixture history, and
// checked against a reader's hand computation from the newest night's parity results.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>

#include "harness/baselines/baselines.h"
#include "harness/history/history.h"
#include "harness/parity/nights.h"
#include "harness/parity/parity.h"
#include "harness/scenario/scenario.h"
#include "reports/baselines_reports.h"
#include "tests/support/test_support.h"
#include "tests/unit/baselines_fixture.h"

using namespace isoharness;

namespace {

struct Expected {
  double est = 0, low = 0, high = 0;
  bool known = false;
};

// A cell's slowdown over runc/tier, read from the parity section as a reader would: the
// stored mix for the default mix, harness/parity's compare + combine for a named one.
Expected slowdown(const nlohmann::json& section, const std::string& cell, const std::string& mix,
                  const scenario::Scenario& s) {
  if (cell == "runc/tier") return {1, 1, 1, true};
  if (!section["samples"].contains(cell)) return {};
  if (mix == "default") {
    for (const auto& c : section["cells"])
      if (c["name"] == cell) {
        const auto& x = c["mix"]["slowdown"];
        return {x["estimate"], x["low"], x["high"], true};
      }
    return {};
  }
  const auto& weights = s.mixes.at(mix);
  std::vector<parity::WorkloadComparison> comparisons;
  for (const auto& [w, weight] : weights) {
    if (!section["samples"]["runc/tier"].contains(w) || !section["samples"][cell].contains(w)) continue;
    comparisons.push_back(parity::compare(w, section["samples"]["runc/tier"][w].get<std::vector<double>>(),
                                          section["samples"][cell][w].get<std::vector<double>>(), 1.25,
                                          0.95));
  }
  const auto m = parity::combine(comparisons, weights, 1.25, {});
  return {m.slowdown.estimate, m.slowdown.low, m.slowdown.high, true};
}

// target / record with the log-space root-sum-of-squares interval, written out.
Expected by_hand(const Expected& t, const Expected& r) {
  const double e = t.est / r.est;
  const double down = std::sqrt(std::pow(std::log(t.est / t.low), 2) + std::pow(std::log(r.high / r.est), 2));
  const double up = std::sqrt(std::pow(std::log(t.high / t.est), 2) + std::pow(std::log(r.est / r.low), 2));
  return {e, e / std::exp(down), e * std::exp(up), true};
}

std::string band(const Expected& x) {
  if (x.low >= 1 / 1.25 && x.high <= 1.25) return "comparable";
  if (x.high < 1 / 1.25 || x.low > 1.25) return "adjust";
  return "inconclusive";
}

struct Assessed {
  test::TempDir dir{"ih-baselines"};
  scenario::Scenario scenario =
      scenario::load_scenario(test::source_dir() + "/scenarios/parity/default.yaml");
  nlohmann::json doc;
  // One night by default: the hand computations below read the newest night alone.
  explicit Assessed(const std::string& at = "2026-06-20T00:00:00Z",
                    const std::string& csv = test::baselines_csv(),
                    const baselines::AssessOptions& options = {"", false, 1, 1.0},
                    const std::function<void(history::Database&)>& more = {},
                    const std::map<std::string, double>& mix_fractions = {}) {
    const std::string db_path = (dir.path / "h.sqlite").string();
    test::make_baselines_history(db_path);
    if (more) {
      history::Database extra(db_path);
      more(extra);
    }
    baselines::ParseOptions o{"2026-12-01T00:00:00Z", at, std::set<std::string>{}};
    for (const auto& [name, _] : scenario.mixes) o.mixes->insert(name);
    const auto file = baselines::parse_baselines(csv, "baselines.csv", o);
    const history::Database db(db_path);
    doc = baselines::assess(file, baselines::read_history(db, o.at_utc), {"gvisor", "non-tier", o.at_utc},
                            {scenario.mixes, scenario.name, mix_fractions}, options);
  }
};

}  // namespace

TEST_CASE("every record's ratio, corrected interval and verdict are the reader's", "[baselines]") {
  Assessed a;
  const auto section = test::baseline_night(test::kNights - 1)["parity"];
  const std::string upgrade = test::baseline_night_started(test::kUpgradeNight);
  REQUIRE(a.doc["records"].size() == 24);
  int stale = 0, unknown = 0;
  for (const auto& r : a.doc["records"]) {
    INFO("line " << r["line"] << " " << r["cell"].get<std::string>() << " mix "
                 << r["mix"].get<std::string>());
    const std::string cell = r["cell"], mix = r["mix"];
    const Expected rec = slowdown(section, cell, mix, a.scenario);
    const Expected tgt = slowdown(section, "gvisor/non-tier", mix, a.scenario);
    const bool own_changed = cell.starts_with("gvisor/") && r["recorded_utc"].get<std::string>() < upgrade;
    if (!rec.known) {
      CHECK(r["verdict"] == "unknown");
      CHECK(r["ratio"].is_null());
      CHECK(r["corrected_s"].is_null());
      ++unknown;
      continue;
    }
    const Expected x = cell == "gvisor/non-tier" ? Expected{1, 1, 1, true} : by_hand(tgt, rec);
    const double d = r["duration_s"];
    CHECK(r["ratio"]["estimate"].get<double>() == Approx(x.est).epsilon(1e-9));
    CHECK(r["ratio"]["low"].get<double>() == Approx(x.low).epsilon(1e-9));
    CHECK(r["ratio"]["high"].get<double>() == Approx(x.high).epsilon(1e-9));
    CHECK(r["corrected_s"]["estimate"].get<double>() == Approx(d * x.est).epsilon(1e-9));
    CHECK(r["corrected_s"]["low"].get<double>() == Approx(d * x.low).epsilon(1e-9));
    CHECK(r["corrected_s"]["high"].get<double>() == Approx(d * x.high).epsilon(1e-9));
    CHECK(r["ratio_verdict"] == band(x));
    CHECK(r["verdict"] == (own_changed ? "stale" : band(x)));
    if (cell != "gvisor/non-tier") CHECK(r["source"]["run"] == test::baseline_night_id(test::kNights - 1));
    stale += own_changed;
  }
  CHECK(unknown == 1);
  CHECK(stale == 7);
  CHECK(a.doc["summary"]["stale"] == stale);
}

TEST_CASE("a record from before the runsc upgrade is stale naming it; one from after is not", "[baselines]") {
  Assessed a;
  const auto& records = a.doc["records"];
  const auto find = [&](const std::string& item) {
    for (const auto& r : records)
      if (r["item"] == item) return r;
    FAIL("no record " << item);
    return nlohmann::json();
  };
  const auto before = find("pwn_2");  // gvisor/tier, 2026-06-05
  const auto after = find("web_2");   // gvisor/tier, 2026-06-08
  CHECK(before["verdict"] == "stale");
  const std::string why = before["reason"];
  INFO(why);
  CHECK(why.find("runsc: release-20260301.0 -> release-20260612.0") != std::string::npos);
  CHECK(why.find(test::kUpgradeNote) != std::string::npos);
  CHECK(why.find(test::baseline_night_id(test::kUpgradeNight)) != std::string::npos);
  CHECK(after["verdict"] != "stale");
  CHECK(after["drift"].empty());
  // runc/tier is the parity baseline: a runsc upgrade is not its own change, but the
  // target's change since its recording is listed.
  const auto runc = find("add_test");
  CHECK(runc["verdict"] != "stale");
  REQUIRE(runc["drift"].size() == 1);
  CHECK(runc["drift"][0]["own_cell"] == false);
  CHECK(runc["drift"][0]["cell"] == "gvisor/non-tier");
}

TEST_CASE("a well-formed cell that no parity run timed is a record with verdict unknown", "[baselines]") {
  Assessed a;
  for (const auto& r : a.doc["records"])
    if (r["cell"] == "runc/gpu") {
      CHECK(r["verdict"] == "unknown");
      CHECK(r["reason"].get<std::string>().find("no parity run") != std::string::npos);
    }
}

TEST_CASE("the reports carry every record", "[baselines]") {
  Assessed a;
  const std::string csv = reports::render_baselines_csv(a.doc);
  CHECK(csv.starts_with("task,item,human,duration_s,recorded_at,runtime,node_class,mix,notes,target_cell,"));
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 25);
  CHECK(csv.find("no parity run times this cell") != std::string::npos);
  CHECK(csv.find(",notes,target_cell,mix_used,ratio,") != std::string::npos);
  // It reads back as a baseline file: the input's columns are all there, unchanged.
  const auto again = baselines::parse_baselines(csv, "again.csv", {"2026-12-01T00:00:00Z", "", std::nullopt});
  REQUIRE(again.records.size() == 24);
  CHECK(again.records[3].fields.at("recorded_at") == "2026-06-10T08:30:00+02:00");
  CHECK(again.records[3].fields.at("verdict") == "adjust");
  const std::string md = reports::render_baselines_markdown(a.doc);
  CHECK(md.find("| 21 | swe / fix_gpu |") != std::string::npos);
  const std::string html = reports::render_baselines_html(a.doc);
  CHECK(std::count(html.begin(), html.end(), '<') > 100);
  std::size_t svgs = 0;
  for (std::size_t p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 1)) ++svgs;
  CHECK(svgs == 1);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(baselines::to_text(a.doc).find("24 records:") != std::string::npos);
}

TEST_CASE(
    "as of a date before the upgrade, that day's newest run decides; a straddling ratio is inconclusive",
    "[baselines]") {
  const std::string csv =
      "task,item,duration_s,recorded_at,runtime,node_class,mix\n"
      "swe,a,3600,2026-06-02,runc,tier,\n"
      "swe,b,3600,2026-06-03,gvisor,tier,\n"
      "swe,c,3600,2026-06-04,runc,non-tier,\n"
      "swe,d,3600,2026-06-04,runc,tier,compile_heavy\n";
  Assessed a("2026-06-05T23:59:59Z", csv);
  const auto section = test::baseline_night(4)["parity"];  // b04, 2026-06-05T02:00:00Z
  const auto& records = a.doc["records"];
  REQUIRE(records.size() == 4);
  const Expected tgt = slowdown(section, "gvisor/non-tier", "default", a.scenario);
  // runc/tier -> gvisor/non-tier before the upgrade: about 1.256 [1.229, 1.284] against 1.25.
  const auto& r = records[0];
  CHECK(r["source"]["run"] == test::baseline_night_id(4));
  CHECK(r["ratio"]["estimate"].get<double>() == Approx(tgt.est).epsilon(1e-9));
  REQUIRE(band(tgt) == "inconclusive");
  CHECK(r["verdict"] == "inconclusive");
  const double e = std::log(tgt.est), bound = std::log(1.25);
  const double half = e > bound ? e - std::log(tgt.low) : std::log(tgt.high) - e;
  const int rounds = 12;  // samples per side in the fixture's parity run
  const int more = static_cast<int>(std::ceil(rounds * std::pow(half / std::abs(e - bound), 2)) - rounds);
  CHECK(r["rounds_needed"] == std::max(1, more));
  for (const auto& rec : records) {
    INFO("line " << rec["line"]);
    CHECK(rec["drift"].empty());  // five nights: no change point yet
    const Expected x = by_hand(slowdown(section, "gvisor/non-tier", rec["mix"], a.scenario),
                               slowdown(section, rec["cell"], rec["mix"], a.scenario));
    CHECK(rec["ratio"]["low"].get<double>() == Approx(x.low).epsilon(1e-9));
    CHECK(rec["ratio"]["high"].get<double>() == Approx(x.high).epsilon(1e-9));
    CHECK(rec["verdict"] == band(x));
  }
}

TEST_CASE("before the first parity run every record is unknown", "[baselines]") {
  Assessed a("2026-05-31T00:00:00Z",
             "task,item,duration_s,recorded_at,runtime,node_class\nswe,a,60,2026-05-01,runc,tier\n");
  CHECK(a.doc["records"][0]["verdict"] == "unknown");
  CHECK(a.doc["parity_runs"].empty());
}

namespace {

// A night of another deployment (hawk, profile "staging"), after the local series: its
// gVisor cells 10 % slower than the local ones, and an A/A twin of the baseline that reads
// aa (1 = quiet). The section carries its provenance; the context has no runtime versions.
nlohmann::json staging_night(int night, double aa, bool gvisor_tier = true) {
  auto result = test::baseline_night(test::kNights - 1);
  const auto in = result["parity"];
  parity::SectionInput input;
  input.scenario = "parity";
  input.baseline = "runc/tier";
  input.tolerance = 1.25;
  input.weights = in["weights"].get<std::map<std::string, double>>();
  input.samples = in["samples"].get<parity::Samples>();
  for (auto& [w, t] : input.samples["gvisor/non-tier"])
    for (double& x : t) x *= 1.10;
  if (!gvisor_tier) input.samples.erase("gvisor/tier");
  input.samples["runc/tier#2"] = input.samples["runc/tier"];
  for (auto& [w, t] : input.samples["runc/tier#2"])
    for (double& x : t) x *= aa;
  result["parity"] = parity::analyse(input);
  result["parity"]["provenance"] = {
      {"backend", "hawk"}, {"deployment", "staging"}, {"runtime", {{"node_image", "img-2026.06"}}}};
  result["run"]["id"] = "s0" + std::to_string(night);
  result["context"]["backend"] = "hawk";
  result["context"].erase("runc");
  result["context"].erase("runsc");
  result["context"]["started"] = "2026-06-1" + std::to_string(5 + night) + "T02:00:00Z";
  return result;
}

std::function<void(history::Database&)> staging_nights(double aa, bool gvisor_tier = true) {
  return [=](history::Database& db) {
    for (int n = 0; n < 3; ++n) db.record(staging_night(n, aa, gvisor_tier));
  };
}

const nlohmann::json& record_of(const nlohmann::json& doc, const std::string& item) {
  for (const auto& r : doc["records"])
    if (r["item"] == item) return r;
  FAIL("no record " << item);
  return doc;
}

}  // namespace

TEST_CASE("a history mixing local and deployment runs: only the deployment's are used, and it says so",
          "[baselines]") {
  const std::string csv =
      "task,item,duration_s,recorded_at,runtime,node_class\n"
      "swe,a,3600,2026-06-12,runc,tier\n"
      "swe,b,3600,2026-06-12,gvisor,tier\n";
  // With two deployments in the history, one is named: none is guessed.
  Assessed a("2026-06-20T00:00:00Z", csv, {"hawk/staging", false, 5, 1.0}, staging_nights(1.0, false));
  CHECK(a.doc["deployment"]["name"] == "hawk/staging");
  CHECK(a.doc["deployment"]["chosen"] == "--deployment");
  CHECK(a.doc["deployment"]["runs_of_other_deployments"].size() == test::kNights);
  const auto& r = record_of(a.doc, "a");
  CHECK(r["source"]["deployment"] == "staging");
  CHECK(r["source"]["from_another_deployment"] == false);
  REQUIRE(r["nights"]["count"] == 3);
  for (const auto& n : r["nights"]["runs"]) CHECK(n["run"].get<std::string>().starts_with("s0"));
  // The staging nights' gvisor/non-tier is 10 % slower than the local series'.
  const Expected local =
      slowdown(test::baseline_night(test::kNights - 1)["parity"], "gvisor/non-tier", "default", a.scenario);
  CHECK(r["ratio"]["estimate"].get<double>() > local.est * 1.05);
  // gvisor/tier was never timed on staging: unknown, naming the local runs and the flag.
  const auto& b = record_of(a.doc, "b");
  CHECK(b["verdict"] == "unknown");
  CHECK_THAT(b["reason"].get<std::string>(),
             Catch::Contains("local/unknown") && Catch::Contains("--other-deployments"));

  Assessed other("2026-06-20T00:00:00Z", csv, {"hawk/staging", true, 5, 1.0}, staging_nights(1.0, false));
  const auto& b2 = record_of(other.doc, "b");
  CHECK(b2["verdict"] != "unknown");
  CHECK(b2["source"]["from_another_deployment"] == true);
  CHECK(b2["source"]["backend"] == "local");

  // Asked for the old local runs by name: they are used, with the warning that their
  // deployment was never recorded.
  Assessed old("2026-06-20T00:00:00Z", csv, {"local/unknown", false, 5, 1.0}, staging_nights(1.0, false));
  CHECK(record_of(old.doc, "a")["source"]["backend"] == "local");
  CHECK(old.doc["deployment"]["warning"].is_string());
}

TEST_CASE("the last nights combine with random effects, and only while the runtime stays the same",
          "[baselines]") {
  const std::string csv =
      "task,item,duration_s,recorded_at,runtime,node_class\nswe,a,3600,2026-06-02,runc,tier\n";
  Assessed five("2026-06-20T00:00:00Z", csv, {"", false, 5, 1.0});
  const auto& r = five.doc["records"][0];
  REQUIRE(r["nights"]["count"] == 5);
  CHECK(r["nights"]["runs"][0]["run"] == test::baseline_night_id(test::kNights - 1));
  CHECK(r["nights"]["between_nights_known"] == true);
  CHECK(r["nights"]["tau2"].get<double>() == Approx(0).margin(1e-12));  // identical nights
  CHECK(r["nights"]["aa"]["spread"].is_null());                         // the local fixture timed no twin
  // Two nights after the runsc upgrade: only those two (the earlier runs ran another runsc).
  Assessed after("2026-06-08T23:59:59Z", csv, {"", false, 5, 1.0});
  const auto& r2 = after.doc["records"][0];
  REQUIRE(r2["nights"]["count"] == 2);
  CHECK(r2["nights"]["runs"][1]["run"] == test::baseline_night_id(test::kUpgradeNight));
  CHECK_FALSE(r2["nights"]["warnings"].empty());
}

TEST_CASE("an A/A spread beyond the tolerance gives no verdict: unstable", "[baselines]") {
  const std::string csv =
      "task,item,duration_s,recorded_at,runtime,node_class\nswe,a,3600,2026-06-12,runc,tier\n";
  Assessed noisy("2026-06-20T00:00:00Z", csv, {"hawk/staging", false, 5, 1.0}, staging_nights(0.70));
  const auto& r = noisy.doc["records"][0];
  CHECK(r["nights"]["aa"]["unstable"] == true);
  CHECK(r["verdict"] == "unstable");
  CHECK(noisy.doc["summary"]["unstable"] == 1);
  Assessed quiet("2026-06-20T00:00:00Z", csv, {"hawk/staging", false, 5, 1.0}, staging_nights(1.0));
  CHECK(quiet.doc["records"][0]["nights"]["aa"]["unstable"] == false);
  CHECK(quiet.doc["records"][0]["verdict"] != "unstable");
}

TEST_CASE("compute_fraction: only the sandbox share of a human's time scales", "[baselines]") {
  const std::string csv =
      "task,item,duration_s,recorded_at,runtime,node_class,compute_fraction\n"
      "swe,a,3600,2026-06-12,runc,tier,0.25\n"
      "swe,b,3600,2026-06-12,runc,tier,\n";
  Assessed a("2026-06-20T00:00:00Z", csv, {"", false, 1, 1.0});
  const auto& r = record_of(a.doc, "a");
  const auto& ratio = r["ratio"];
  CHECK(r["compute_fraction"]["from"] == "record");
  for (const char* k : {"estimate", "low", "high"})
    CHECK(r["corrected_s"][k].get<double>() == Approx(3600 * (0.75 + 0.25 * ratio[k].get<double>())));
  const auto& b = record_of(a.doc, "b");
  CHECK(b["compute_fraction"]["value"] == 1.0);
  CHECK(b["compute_fraction"]["from"] == "default");
  CHECK(b["corrected_s"]["estimate"].get<double>() == Approx(3600 * b["ratio"]["estimate"].get<double>()));
  // The whole time scaled, the ratio ~1.6 is "adjust"; a quarter of it, the effective
  // ratio ~1.15 lies inside the band [1/1.25, 1.25].
  CHECK(b["verdict"] == "adjust");
  CHECK(r["verdict"] == "comparable");
  CHECK_THAT(a.doc["method"]["compute_fraction"].get<std::string>(), Catch::Contains("default"));
  const std::string bad =
      "task,item,duration_s,recorded_at,runtime,node_class,compute_fraction\nswe,a,60,2026-06-01,runc,tier,1."
      "5\n";
  CHECK_THROWS_WITH(baselines::parse_baselines(bad, "b.csv", {"2026-12-01T00:00:00Z", "", std::nullopt}),
                    Catch::Contains("compute_fraction"));
}

TEST_CASE("compute_fraction of a named mix: used for its records that state none, and said so",
          "[baselines]") {
  const std::string csv =
      "task,item,duration_s,recorded_at,runtime,node_class,mix,compute_fraction\n"
      "swe,c,3600,2026-06-12,runc,tier,compile_heavy,\n"
      "swe,d,3600,2026-06-12,runc,tier,compile_heavy,0.5\n"
      "swe,e,3600,2026-06-12,runc,tier,interactive,\n";
  Assessed a("2026-06-20T00:00:00Z", csv, {"", false, 1, 1.0}, {}, {{"compile_heavy", 0.3}});
  const auto& c = record_of(a.doc, "c");
  CHECK(c["compute_fraction"] == nlohmann::json({{"value", 0.3}, {"from", "mix"}}));
  for (const char* k : {"estimate", "low", "high"})
    CHECK(c["corrected_s"][k].get<double>() == Approx(3600 * (0.7 + 0.3 * c["ratio"][k].get<double>())));
  CHECK(record_of(a.doc, "d")["compute_fraction"] == nlohmann::json({{"value", 0.5}, {"from", "record"}}));
  CHECK(record_of(a.doc, "e")["compute_fraction"] == nlohmann::json({{"value", 1.0}, {"from", "default"}}));
  CHECK(a.doc["compute_fraction_mixes"] == nlohmann::json({{"compile_heavy", 0.3}}));
  CHECK_THAT(a.doc["method"]["compute_fraction"].get<std::string>(), Catch::Contains("named mix"));
  // Every report says which assumption each record was corrected with.
  const auto md = reports::render_baselines_markdown(a.doc);
  const auto html = reports::render_baselines_html(a.doc);
  for (const auto& page : {md, html}) {
    CHECK_THAT(page, Catch::Contains("compute share") && Catch::Contains("0.3 (mix compile_heavy)") &&
                         Catch::Contains("0.5 (record)") && Catch::Contains("1 (default)"));
    CHECK_THAT(page, Catch::Contains("1 - f + f x ratio"));
  }
  CHECK_THAT(baselines::to_text(a.doc),
             Catch::Contains("compute_fraction of named mixes (for their records that "
                             "state none): compile_heavy 0.3"));
  const auto csv_out = reports::render_baselines_csv(a.doc);
  CHECK_THAT(csv_out, Catch::Contains("compute_fraction_used,compute_fraction_from\n"));
  CHECK_THAT(csv_out, Catch::Contains(",0.3,mix\n") && Catch::Contains(",0.5,record\n") &&
                          Catch::Contains(",1,default\n"));
}

TEST_CASE("stale sees what change points cannot: the last nights, and records older than the history",
          "[baselines]") {
  // As of the night after the upgrade, E-divisive has one run at the new level: no change
  // point yet. The runs' provenance shows runsc changed since the record.
  const std::string csv =
      "task,item,duration_s,recorded_at,runtime,node_class\n"
      "ctf,a,3600,2026-06-03,gvisor,tier\n"
      "swe,b,3600,2026-06-03,runc,tier\n"
      "swe,c,3600,2026-05-01,runc,non-tier\n";
  Assessed a("2026-06-07T23:59:59Z", csv);
  const auto& r = record_of(a.doc, "a");
  CHECK(r["drift"].empty());
  CHECK(r["verdict"] == "stale");
  CHECK_THAT(r["reason"].get<std::string>(),
             Catch::Contains("runsc: release-20260301.0 -> release-20260612.0"));
  CHECK(record_of(a.doc, "b")["verdict"] != "stale");  // runc did not change
  const auto& c = record_of(a.doc, "c");
  REQUIRE(c["warnings"].size() == 1);
  CHECK_THAT(c["warnings"][0].get<std::string>(), Catch::Contains("recorded before the first run"));
}
