// The parity page in a real browser: headless Chromium renders it to a PNG, which must
// exist, have the window's size and hold more than a blank page. As root, Chromium runs
// in a fresh network namespace (unshare --net), so it cannot send a packet anywhere.
// The screenshot is kept as <build>/parity_screenshot.png for a person to look at.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>

#include "harness/common/subprocess.h"
#include "reports/reports.h"
#include "tests/support/test_support.h"
#include "tests/unit/reports_fixture.h"

using namespace isoharness;
namespace fs = std::filesystem;

namespace {

std::uint32_t be32(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

}  // namespace

TEST_CASE("the parity page renders in headless Chromium and shows the chart", "[reports][browser]") {
  test::TempDir dir("ih-reports-browser");
  const auto result = test::result_with_parity_fixture();
  const fs::path html = dir.path / "parity.html";
  std::ofstream(html) << reports::render_parity_html(result["parity"], result["context"]);
  const fs::path png = dir.path / "parity.png";
  const fs::path profile = dir.path / "profile";
  fs::create_directories(profile);

  std::vector<std::string> argv;
  if (::geteuid() == 0) argv = {"unshare", "--net", "--"};
  for (const char* a : {"chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                        "--no-first-run", "--disable-background-networking", "--disable-component-update",
                        "--disable-sync", "--hide-scrollbars"}) {
    argv.push_back(a);
  }
  argv.push_back("--user-data-dir=" + profile.string());
  argv.push_back("--screenshot=" + png.string());
  argv.push_back("--window-size=1200,900");
  argv.push_back("file://" + html.string());

  RunOptions options;
  options.deadline = std::chrono::seconds(90);
  options.merge_stderr = true;
  options.max_output = 64 * 1024;
  auto run = run_command(argv, options);
  REQUIRE(run.has_value());
  INFO("chromium: " << run->describe() << "\n" << run->out);
  REQUIRE(run->ok());
  REQUIRE(fs::exists(png));

  const std::string bytes = test::read_text(png.string());
  REQUIRE(bytes.size() > 24);
  CHECK(bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  CHECK(bytes.compare(12, 4, "IHDR") == 0);
  CHECK(be32(bytes, 16) == 1200);
  CHECK(be32(bytes, 20) == 900);
  // A blank 1200x900 page compresses to a few KiB; the chart with its text is far larger.
  CHECK(bytes.size() > 40 * 1024);

  std::error_code ec;
  fs::copy_file(png, fs::path(test::binary_dir()) / "parity_screenshot.png",
                fs::copy_options::overwrite_existing, ec);
}
