// Text-level helpers of the YAML reader: UTF-8 validation and YAML 1.2 core-schema
// resolution of plain scalars. Pure functions on strings, tested and fuzzed directly.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace isoharness::scenario {

struct BadByte {
  int line = 0;    // 1-based
  int column = 0;  // 1-based, in bytes
  std::string byte_hex;
};

// The first byte that breaks UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF), or nullopt when the whole text is valid.
std::optional<BadByte> first_invalid_utf8(std::string_view text);

// yaml-cpp writes the escapes \N (U+0085) and \_ (U+00A0) of a double-quoted scalar as
// single bytes, which are not UTF-8. The text was UTF-8 before yaml-cpp read it, so every
// such byte stands for the code point of the same value: it is re-encoded as UTF-8.
std::string utf8_after_escapes(const std::string& scalar);

// The first C0 control character other than tab, line feed and carriage return, or DEL:
// YAML does not allow them in a stream (yaml-cpp turns a NUL into bytes that are not UTF-8).
std::optional<BadByte> first_control_character(std::string_view text);

// YAML 1.2 core schema resolution of a plain (unquoted, untagged) scalar: null, bool,
// integer (int64; out of range stays text), float, else the text itself.
nlohmann::json plain_scalar(const std::string& s);

}  // namespace isoharness::scenario
