#include "tests/unit/browser_screenshot.h"

#include <unistd.h>

#include <chrono>
#include <vector>

#include "harness/common/subprocess.h"
#include "tests/support/test_support.h"

namespace isoharness::test {

Screenshot screenshot(const std::string& html, const std::string& png_path, const std::string& profile_dir,
                      int width, int height) {
  std::vector<std::string> argv;
  if (::geteuid() == 0) argv = {"unshare", "--net", "--"};
  for (const char* a : {"chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                        "--no-first-run", "--disable-background-networking", "--disable-component-update",
                        "--disable-sync", "--hide-scrollbars"}) {
    argv.push_back(a);
  }
  argv.push_back("--user-data-dir=" + profile_dir);
  argv.push_back("--screenshot=" + png_path);
  argv.push_back("--window-size=" + std::to_string(width) + "," + std::to_string(height));
  argv.push_back("file://" + html);

  RunOptions options;
  options.deadline = std::chrono::seconds(90);
  options.merge_stderr = true;
  options.max_output = 64 * 1024;
  auto run = run_command(argv, options);
  Screenshot out;
  if (!run) {
    out.log = "chromium did not start: " + run.error().message;
    return out;
  }
  out.log = run->describe() + "\n" + run->out;
  out.ok = run->ok();
  if (out.ok && ::access(png_path.c_str(), R_OK) == 0) out.png = read_text(png_path);
  return out;
}

std::uint32_t be32(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

}  // namespace isoharness::test
