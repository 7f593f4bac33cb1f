#include "tests/unit/browser_screenshot.h"

#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdlib>
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

namespace {

// The PNG filter types (PNG spec, section 9): each row's bytes against the row above.
int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : (pb <= pc ? b : c);
}

bool unfilter(const std::string& raw, Pixels& px) {
  const std::size_t bpp = px.channels, stride = px.width * bpp;
  px.data.assign(stride * px.height, '\0');
  for (std::size_t y = 0; y < px.height; ++y) {
    const int type = static_cast<unsigned char>(raw[y * (stride + 1)]);
    const auto* in = reinterpret_cast<const unsigned char*>(raw.data() + y * (stride + 1) + 1);
    auto* out = reinterpret_cast<unsigned char*>(px.data.data() + y * stride);
    const unsigned char* up = y ? out - stride : nullptr;
    for (std::size_t x = 0; x < stride; ++x) {
      const int a = x >= bpp ? out[x - bpp] : 0, b = up ? up[x] : 0, c = up && x >= bpp ? up[x - bpp] : 0;
      const int pred = type == 0   ? 0
                       : type == 1 ? a
                       : type == 2 ? b
                       : type == 3 ? (a + b) / 2
                                   : paeth(a, b, c);
      if (type > 4) return false;
      out[x] = static_cast<unsigned char>(in[x] + pred);
    }
  }
  return true;
}

}  // namespace

Pixels decode_png(const std::string& bytes) {
  Pixels px;
  if (bytes.size() < 33 || bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return px;
  std::string idat;
  for (std::size_t at = 8; at + 12 <= bytes.size();) {
    const std::uint32_t len = be32(bytes, at);
    const std::string type = bytes.substr(at + 4, 4);
    if (at + 12 + len > bytes.size()) return {};
    if (type == "IHDR") {
      px.width = be32(bytes, at + 8);
      px.height = be32(bytes, at + 12);
      const int depth = bytes[at + 16], colour = bytes[at + 17], interlace = bytes[at + 20];
      if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0) return {};
      px.channels = colour == 6 ? 4 : 3;
    } else if (type == "IDAT") {
      idat.append(bytes, at + 8, len);
    }
    at += 12 + len;
  }
  if (!px.channels || px.width == 0 || px.height == 0 || px.width > 8192 || px.height > 8192) return {};
  uLongf size = (px.width * px.channels + 1) * px.height;
  std::string raw(size, '\0');
  if (::uncompress(reinterpret_cast<Bytef*>(raw.data()), &size, reinterpret_cast<const Bytef*>(idat.data()),
                   idat.size()) != Z_OK ||
      size != raw.size() || !unfilter(raw, px))
    return {};
  return px;
}

std::uint32_t be32(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

}  // namespace isoharness::test
