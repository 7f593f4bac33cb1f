// Escaping and number formatting shared by the renderers (internal to reports/).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace isoharness::reports {

// For HTML text and attribute values, and for SVG.
std::string escape_html(std::string_view text);
// For XML 1.0 text and attributes: also replaces control characters XML cannot hold.
std::string escape_xml(std::string_view text);
// For one Markdown table cell or inline text: one line; pipes, angle brackets, ampersands
// and square brackets (link and image syntax) escaped.
std::string escape_md_inline(std::string_view text);
// A fenced Markdown code block whose fence is longer than any backtick run in text.
std::string md_code_block(std::string_view text);

// Cuts text to at most max_bytes (at a UTF-8 boundary) and says how much was left out.
std::string truncate_text(std::string_view text, std::size_t max_bytes);

// Strings as they are; null as "-"; everything else as compact JSON.
std::string json_to_text(const nlohmann::json& value);

// "1.02 µs", "250 ns", "12.0 ms", "1.20 s" (input in seconds).
std::string format_seconds(double seconds);
// "1.043" below 10, "40.2" below 100, "412" above.
std::string format_ratio(double ratio);
// "1.10": tolerances have two decimals.
std::string format_tolerance(double tolerance);
// "< 0.001", "0.034", "0.52".
std::string format_p(double p);

// A JSON value that is a string, or fallback.
std::string str_or(const nlohmann::json& object, const char* key, std::string fallback = "");

}  // namespace isoharness::reports
