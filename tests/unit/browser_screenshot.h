// Headless Chromium screenshots of a rendered page, for the report tests. As root,
// Chromium runs in a fresh network namespace (unshare --net), so it cannot send a packet
// anywhere; the page must be self-contained anyway.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

// What a page did when headless Chromium opened it, seen through the DevTools protocol
// (--remote-debugging-pipe): every URL requested (the page's own included), every console
// error, uncaught exception and browser log entry at level error, and the load time.
struct PageVisit {
  bool ok = false;                          // the page loaded and the browser answered throughout
  std::string log;                          // what went wrong, and chromium's own output
  std::string url;                          // file://html
  std::vector<std::string> requests;        // URLs, in the order they were asked for
  std::vector<std::string> console_errors;  // "console.error: ...", "exception: ...", "log: ..."
  double load_ms = -1;                      // navigation start to the end of the load event
  nlohmann::json evaluated;                 // `expression`'s value after the load (a JSON value)
};

// Opens file://html in a fresh headless Chromium (in its own network namespace as root) at
// width x height, waits for the load event and a short settling time (late errors and
// requests count too), then evaluates `expression` (JavaScript, may be empty) in the page.
PageVisit visit_page(const std::string& html, const std::string& profile_dir, int width, int height,
                     const std::string& expression = "");

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
