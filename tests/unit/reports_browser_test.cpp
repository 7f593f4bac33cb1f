// The parity page in a real browser: headless Chromium (tests/unit/browser_screenshot.h)
// renders it to a PNG, which must exist, have the window's size and hold more than a
// blank page. The screenshot is kept as <build>/parity_screenshot.png for a person to look at.
// The run page (report.html) is opened over the DevTools protocol (visit_page): no console
// error, no request outside the file, loaded in under 1 s, and its DOM holds the matrix
// and the since-last-run section; its screenshot is kept as <build>/report_screenshot.png.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "reports/reports.h"
#include "tests/support/test_support.h"
#include "tests/unit/browser_screenshot.h"
#include "tests/unit/reports_fixture.h"

using namespace isoharness;
namespace fs = std::filesystem;

TEST_CASE("the parity page renders in headless Chromium and shows the chart", "[reports][browser]") {
  test::TempDir dir("ih-reports-browser");
  const auto result = test::result_with_parity_fixture();
  const fs::path html = dir.path / "parity.html";
  std::ofstream(html) << reports::render_parity_html(result["parity"], result["context"]);
  const fs::path png = dir.path / "parity.png";
  const fs::path profile = dir.path / "profile";
  fs::create_directories(profile);

  const auto shot = test::screenshot(html.string(), png.string(), profile.string(), 1200, 2400);
  INFO("chromium: " << shot.log);
  REQUIRE(shot.ok);
  REQUIRE(fs::exists(png));

  const std::string& bytes = shot.png;
  REQUIRE(bytes.size() > 24);
  CHECK(bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  CHECK(bytes.compare(12, 4, "IHDR") == 0);
  CHECK(test::be32(bytes, 16) == 1200);
  CHECK(test::be32(bytes, 20) == 2400);
  // A blank 1200x2400 page compresses to a few KiB; the chart with its text is far larger.
  CHECK(bytes.size() > std::size_t{40} * 1024);
  // The chart itself, in pixels: its parity zone is #dafbe1 at 55 % over white, about
  // (235, 253, 239), and its slowdown zone #ffebe9 at 70 %, about (255, 241, 240). The
  // verdict badges use the same two colours at full strength, (218, 251, 225) and
  // (255, 235, 233), so only the blended shades count: a page without its chart has none.
  // (The window is 2400 px tall: at 900 the charts were below the fold.)
  const auto px = test::decode_png(bytes);
  REQUIRE(px.width == 1200);
  auto near = [](int v, int want) { return v >= want - 2 && v <= want + 2; };
  const auto green =
      px.count([&](int r, int g, int b) { return near(r, 235) && near(g, 253) && near(b, 239); });
  const auto red = px.count([&](int r, int g, int b) { return r >= 253 && near(g, 241) && near(b, 240); });
  INFO("pixels in the parity zone's shade: " << green << ", in the slowdown zone's: " << red);
  CHECK(green > 2000);
  CHECK(red > 2000);

  std::error_code ec;
  fs::copy_file(png, fs::path(test::binary_dir()) / "parity_screenshot.png",
                fs::copy_options::overwrite_existing, ec);
}

namespace {

// The DOM facts the run-page tests read, as one JSON value.
constexpr const char* kRunPageFacts = R"js(JSON.stringify({
  matrix: !!document.getElementById('matrix'),
  cells: document.querySelectorAll('td.m').length,
  failCells: document.querySelectorAll('td.m.fail').length,
  unwitnessedCells: document.querySelectorAll('td.m.unwitnessed').length,
  since: !!document.getElementById('since'),
  newFailures: (document.getElementById('since-new-failures') || {textContent: ''}).textContent,
  scripts: document.scripts.length,
  width: document.documentElement.scrollWidth
}))js";

// Requests other than the page itself and data: URIs (which are inside the file).
std::vector<std::string> outside(const test::PageVisit& v) {
  std::vector<std::string> out;
  for (const auto& url : v.requests)
    if (url != v.url && !url.starts_with("data:")) out.push_back(url);
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace

TEST_CASE("the run page opens in headless Chromium with no console error and no request outside it",
          "[reports][browser]") {
  test::TempDir dir("ih-run-browser");
  auto f = test::run_page_fixture();
  // The failed check's observed value and reason hold a long list without a space (a
  // capability set, as a default run's do): the page must still fit the window.
  std::string caps;
  for (int i = 0; i < 40; ++i) caps += (i ? "," : "") + std::string("CAP_NUMBER_") + std::to_string(i);
  bool failed = false;
  for (auto& sb : f.current["sandboxes"])
    for (auto& c : sb["checks"])
      if (!failed && c["status"] == "fail")
        c["observed"] = c["reason"] = "the sandbox reports " + caps, failed = true;
  REQUIRE(failed);
  const fs::path html = dir.path / "report.html";
  std::ofstream(html) << reports::render_run_html(f.current, f.previous);
  const fs::path profile = dir.path / "profile";
  fs::create_directories(profile);

  const auto v = test::visit_page(html.string(), profile.string(), 1280, 900, kRunPageFacts);
  INFO("visit: " << v.log);
  INFO("requests:\n" << joined(v.requests) << "console errors:\n" << joined(v.console_errors));
  REQUIRE(v.ok);
  CHECK(v.console_errors.empty());
  CHECK(outside(v).empty());
  REQUIRE(!v.requests.empty());
  CHECK(v.requests.front() == v.url);  // the helper does see requests: the page's own
  INFO("load: " << v.load_ms << " ms");
  CHECK(v.load_ms >= 0);
  CHECK(v.load_ms < 1000);

  const auto facts = nlohmann::json::parse(v.evaluated.get<std::string>());
  INFO("DOM: " << facts.dump());
  CHECK(facts["matrix"] == true);
  CHECK(facts["cells"].get<int>() > 0);
  CHECK(facts["failCells"].get<int>() >= 1);
  CHECK(facts["unwitnessedCells"].get<int>() >= 1);
  CHECK(facts["since"] == true);
  CHECK(!facts["newFailures"].get<std::string>().empty());
  CHECK(facts["scripts"] == 0);
  CHECK(facts["width"].get<int>() <= 1280);  // usable at 1280 px: nothing wider than the window

  const fs::path png = dir.path / "report.png";
  const auto shot = test::screenshot(html.string(), png.string(), profile.string(), 1280, 2000);
  INFO("chromium: " << shot.log);
  REQUIRE(shot.ok);
  CHECK(test::be32(shot.png, 16) == 1280);
  std::error_code ec;
  fs::copy_file(png, fs::path(test::binary_dir()) / "report_screenshot.png",
                fs::copy_options::overwrite_existing, ec);
}

// The same check on a page broken twice, so the one above can fail: a script fetched from
// outside and an uncaught error.
TEST_CASE("the browser check sees a fetch from outside and a script error", "[reports][browser]") {
  test::TempDir dir("ih-run-browser-broken");
  const auto f = test::run_page_fixture();
  std::string page = reports::render_run_html(f.current, f.previous);
  const auto body = page.find("<body");
  REQUIRE(body != std::string::npos);
  page.insert(page.find('>', body) + 1,
              "<script src=\"http://203.0.113.7/x.js\"></script><script>no_such_function();</script>");
  const fs::path html = dir.path / "report.html";
  std::ofstream(html) << page;
  const fs::path profile = dir.path / "profile";
  fs::create_directories(profile);

  const auto v = test::visit_page(html.string(), profile.string(), 1280, 900);
  INFO("visit: " << v.log);
  INFO("requests:\n" << joined(v.requests) << "console errors:\n" << joined(v.console_errors));
  REQUIRE(v.ok);
  const auto out = outside(v);
  CHECK(std::find(out.begin(), out.end(), "http://203.0.113.7/x.js") != out.end());
  auto seen = [&](const std::string& what) {
    return std::any_of(v.console_errors.begin(), v.console_errors.end(),
                       [&](const std::string& e) { return e.find(what) != std::string::npos; });
  };
  CHECK(seen("no_such_function"));  // the uncaught ReferenceError
  CHECK(seen("203.0.113.7/x.js"));  // the failed load, as the console logs it
}

// The page a real run wrote (ci/main's report.html, say): ISOHARNESS_REPORT_PAGE names it.
// Hidden (not run by ctest); `reports_browser_test "[.page]"` runs it.
TEST_CASE("a run's report.html opens with no console error, no request outside it, in under 1 s", "[.page]") {
  const char* page = std::getenv("ISOHARNESS_REPORT_PAGE");
  REQUIRE(page != nullptr);
  test::TempDir dir("ih-run-browser-page");
  const fs::path profile = dir.path / "profile";
  fs::create_directories(profile);
  const auto v = test::visit_page(fs::absolute(page).string(), profile.string(), 1280, 900, kRunPageFacts);
  INFO("visit: " << v.log);
  INFO("requests:\n" << joined(v.requests) << "console errors:\n" << joined(v.console_errors));
  REQUIRE(v.ok);
  CHECK(v.console_errors.empty());
  CHECK(outside(v).empty());
  WARN("load: " << v.load_ms << " ms; DOM: " << v.evaluated.get<std::string>());
  CHECK(v.load_ms < 1000);
  const auto facts = nlohmann::json::parse(v.evaluated.get<std::string>());
  CHECK(facts["matrix"] == true);
  CHECK(facts["width"].get<int>() <= 1280);  // the matrix scrolls in its own box; nothing else is wider
}
