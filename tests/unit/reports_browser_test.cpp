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
  CHECK(bytes.size() > 40 * 1024);
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
