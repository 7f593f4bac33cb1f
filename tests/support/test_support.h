// Helpers shared by tests: where the sources and the build are, fixture loading, and the
// prerequisite gate for system tests.
#pragma once

#include <string>
#include <vector>

namespace isoharness::test {

std::string source_dir();  // repository root
std::string binary_dir();  // build directory
std::string read_text(const std::string& path);  // whole file; fails the test if unreadable

// For [system] tests: checks that we are root and that each named program is on PATH.
// When something is missing it prints what and how to install it, then exits the
// test program: with 77 (ctest "skipped") if ISOHARNESS_SKIP_SYSTEM=1, else with 1.
void require_system(const std::vector<std::string>& programs);

}  // namespace isoharness::test
