// Internal to selftest: the files and the closing lines a selftest leaves.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace isoharness::selftest {

// selftest.md, selftest.html and junit.xml (the detection matrix) into out_dir, each
// written to a temporary name and renamed into place. Returns the paths written.
std::vector<std::string> write_selftest_reports(const nlohmann::json& result, const std::string& out_dir);

// The one-line verdict, each weakening that got through and each false alarm, to stderr.
void print_verdict(const nlohmann::json& section, const std::string& result_path);

}  // namespace isoharness::selftest
