// The parity page in a real browser: headless Chromium (tests/unit/browser_screenshot.h)
// renders it to a PNG, which must exist, have the window's size and hold more than a
// blank page. The screenshot is kept as <build>/parity_screenshot.png for a person to look at.
#include <catch2/catch.hpp>
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

  const auto shot = test::screenshot(html.string(), png.string(), profile.string(), 1200, 900);
  INFO("chromium: " << shot.log);
  REQUIRE(shot.ok);
  REQUIRE(fs::exists(png));

  const std::string& bytes = shot.png;
  REQUIRE(bytes.size() > 24);
  CHECK(bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  CHECK(bytes.compare(12, 4, "IHDR") == 0);
  CHECK(test::be32(bytes, 16) == 1200);
  CHECK(test::be32(bytes, 20) == 900);
  // A blank 1200x900 page compresses to a few KiB; the chart with its text is far larger.
  CHECK(bytes.size() > 40 * 1024);
  // The chart itself, in pixels: its parity zone is a light green band (#dafbe1 at 55 %
  // over white) and its slowdown zone a light red one (#ffebe9 at 70 %); the page around
  // the chart has neither. A page without the chart (or an empty one) has no such pixel.
  const auto px = test::decode_png(bytes);
  REQUIRE(px.width == 1200);
  const auto green = px.count([](int r, int g, int b) { return g > 240 && g - r >= 12 && g - b >= 8; });
  const auto red =
      px.count([](int r, int g, int b) { return r > 245 && r - g >= 8 && r - b >= 8 && g > 225; });
  INFO("pixels in the parity zone's green: " << green << ", in the slowdown zone's red: " << red);
  CHECK(green > 5000);
  CHECK(red > 5000);

  std::error_code ec;
  fs::copy_file(png, fs::path(test::binary_dir()) / "parity_screenshot.png",
                fs::copy_options::overwrite_existing, ec);
}
