// Shared by the libFuzzer targets: the fixed inputs a target needs besides the fuzzed
// bytes, read once from the source tree. A target's contract is that the code under test
// either accepts the input or refuses it with the project's error types; anything else
// (a crash, a sanitizer report, an exception escaping, e.g. a JSON type_error while
// writing a document the parser accepted) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace isoharness::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline std::string source_file(const std::string& relative) {
  std::ifstream in(std::string(ISOHARNESS_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace isoharness::fuzz
