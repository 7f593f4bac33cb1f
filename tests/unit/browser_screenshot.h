// Headless Chromium screenshots of a rendered page, for the report tests. As root,
// Chromium runs in a fresh network namespace (unshare --net), so it cannot send a packet
// anywhere; the page must be self-contained anyway.
#pragma once

#include <cstdint>
#include <string>

namespace isoharness::test {

struct Screenshot {
  bool ok = false;
  std::string log;  // how chromium ended and what it printed
  std::string png;  // the file's bytes
};

// Renders file://html at width x height into png_path (profile_dir holds Chromium's
// profile).
Screenshot screenshot(const std::string& html, const std::string& png_path, const std::string& profile_dir,
                      int width, int height);

// A decoded 8-bit RGB or RGBA PNG (what Chromium writes): width x height pixels, 3 or 4
// bytes each, rows top to bottom; empty pixels when the file is not such a PNG.
struct Pixels {
  std::uint32_t width = 0, height = 0, channels = 0;
  std::string data;
  // How many pixels satisfy pred(r, g, b).
  template <typename Pred>
  std::size_t count(Pred pred) const {
    std::size_t n = 0;
    for (std::size_t i = 0; i + channels <= data.size() && channels >= 3; i += channels)
      n += pred(static_cast<unsigned char>(data[i]), static_cast<unsigned char>(data[i + 1]),
                static_cast<unsigned char>(data[i + 2]))
               ? 1
               : 0;
    return n;
  }
};
Pixels decode_png(const std::string& bytes);

// Big-endian 32-bit number at byte `at` (PNG header fields).
std::uint32_t be32(const std::string& bytes, std::size_t at);

}  // namespace isoharness::test
