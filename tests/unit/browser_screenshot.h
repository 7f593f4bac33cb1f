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

// Big-endian 32-bit number at byte `at` (PNG header fields).
std::uint32_t be32(const std::string& bytes, std::size_t at);

}  // namespace isoharness::test
