// The drift page in a real browser: a history with a step at a runtime upgrade and a new
// step tonight, rendered by reports::render_drift_html and screenshotted by headless
// Chromium (tests/unit/browser_screenshot.h). The PNG must have the window's size and
// hold far more than a blank page; it is kept as <build>/drift_screenshot.png.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "harness/history/drift.h"
#include "reports/drift_reports.h"
#include "tests/support/test_support.h"
#include "tests/unit/browser_screenshot.h"
#include "tests/unit/history_fixture.h"

using namespace isoharness;
namespace fs = std::filesystem;

TEST_CASE("the drift page renders in headless Chromium with its trend charts", "[history][browser]") {
  test::TempDir dir("ih-history-browser");
  {
    history::Database db((dir.path / "h.sqlite").string());
    test::NightPlan plan;
    plan.nights = 30;
    plan.step_at = 12;
    plan.step = 1.15;
    plan.seed = 7;
    const auto logs = test::synthetic_log_ratios(plan);
    for (int i = 0; i < plan.nights; ++i)
      db.record(
          test::parity_night(i, std::exp(logs[i]), i >= plan.step_at ? "runsc 20231009" : "runsc 20221219"));
    db.annotate(test::night_id(12), "gVisor upgraded on the CI host");
    history::DriftOptions options;
    const auto drift = history::analyse_drift(db, options);
    REQUIRE(drift["summary"]["changes"].get<int>() >= 2);
    const std::string html = reports::render_drift_html(drift);
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("src=") == std::string::npos);  // nothing fetched
    CHECK(html.find("href=") == std::string::npos);
    CHECK(html.find("runtime change") != std::string::npos);
    CHECK(html.find("gVisor upgraded on the CI host") != std::string::npos);
    std::ofstream(dir.path / "drift.html") << html;
  }
  const fs::path png = dir.path / "drift.png";
  const fs::path profile = dir.path / "profile";
  fs::create_directories(profile);
  const auto shot =
      test::screenshot((dir.path / "drift.html").string(), png.string(), profile.string(), 1200, 1400);
  INFO("chromium: " << shot.log);
  REQUIRE(shot.ok);
  const std::string& bytes = shot.png;
  REQUIRE(bytes.size() > 24);
  CHECK(bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  CHECK(test::be32(bytes, 16) == 1200);
  CHECK(test::be32(bytes, 20) == 1400);
  // A blank page compresses to a few KiB; charts with their labels are far larger.
  CHECK(bytes.size() > 40 * 1024);
  std::error_code ec;
  fs::copy_file(png, fs::path(test::binary_dir()) / "drift_screenshot.png",
                fs::copy_options::overwrite_existing, ec);
}
