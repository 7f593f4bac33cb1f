// Helpers shared by tests: where the sources and the build are, fixture loading, and the
// prerequisite gate for system tests.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace isoharness::test {

std::string source_dir();                        // repository root
std::string binary_dir();                        // build directory
std::string read_text(const std::string& path);  // whole file; fails the test if unreadable

// A private directory under $TMPDIR for one test (mkdtemp, named <prefix>-XXXXXX),
// removed with everything in it when the test ends, whichever way it ends.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "ih-test");  // throws when it cannot be made
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string str() const { return path.string(); }

  std::filesystem::path path;
};

// For [system] tests: checks that we are root and that each named program is on PATH.
// When something is missing it prints what and how to install it, then exits the
// test program: with 77 (ctest "skipped") if ISOHARNESS_SKIP_SYSTEM=1, else with 1.
void require_system(const std::vector<std::string>& programs);

}  // namespace isoharness::test
