#include "reports/text_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace isoharness::reports {

namespace {

// What stands for a character in an output format.
struct Replacement {
  char c;
  const char* with;
};

constexpr Replacement kHtmlEntities[] = {
    {'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'"', "&quot;"}, {'\'', "&#39;"}};
constexpr Replacement kXmlEntities[] = {
    {'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'"', "&quot;"}, {'\'', "&apos;"}};
// Inside a Markdown table cell: no pipe, no HTML, one line, and no link or image (`[x](y)`,
// `![x](y)`, `[x][ref]`): sandbox text must not become a link in a reader's report.
constexpr Replacement kMarkdownInline[] = {{'|', "\\|"},   {'<', "&lt;"}, {'>', "&gt;"},
                                           {'&', "&amp;"}, {'[', "\\["},  {']', "\\]"},
                                           {'\n', " "},    {'\r', ""},    {'\t', " "}};

template <std::size_t N>
const char* find_replacement(const Replacement (&table)[N], char c) {
  for (const auto& r : table) {
    if (r.c == c) return r.with;
  }
  return nullptr;
}

// Each character of text, or what `other` (when given and it answers), else the table,
// puts in its place.
template <std::size_t N>
std::string replace_chars(std::string_view text, const Replacement (&table)[N],
                          const char* (*other)(char) = nullptr) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const char* with = other ? other(c) : nullptr;
    if (!with) with = find_replacement(table, c);
    if (with) {
      out += with;
    } else {
      out += c;
    }
  }
  return out;
}

// XML 1.0 cannot hold a control character other than tab, newline and carriage return.
const char* xml_control_character(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 && c != '\n' && c != '\t' && c != '\r' ? "\xEF\xBF\xBD" : nullptr;  // U+FFFD
}

}  // namespace

std::string escape_html(std::string_view text) {
  return replace_chars(text, kHtmlEntities);
}

std::string escape_xml(std::string_view text) {
  return replace_chars(text, kXmlEntities, xml_control_character);
}

std::string escape_md_inline(std::string_view text) {
  return replace_chars(text, kMarkdownInline);
}

std::string md_code_block(std::string_view text) {
  std::size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  std::string out = fence + "text\n";
  out += text;
  if (!text.empty() && text.back() != '\n') out += '\n';
  out += fence + "\n";
  return out;
}

std::string truncate_text(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t cut = max_bytes;
  // Back up to the start of a UTF-8 sequence.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return fmt::format("{}… ({} more bytes)", text.substr(0, cut), text.size() - cut);
}

std::string json_to_text(const nlohmann::json& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) return value.get<std::string>();
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string format_seconds(double s) {
  const double a = std::fabs(s);
  if (a < 1e-6) return fmt::format("{:.3g} ns", s * 1e9);
  if (a < 1e-3) return fmt::format("{:.3g} µs", s * 1e6);
  if (a < 1) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} s", s);
}

std::string format_ratio(double r) {
  if (r < 10) return fmt::format("{:.3f}", r);
  if (r < 100) return fmt::format("{:.1f}", r);
  return fmt::format("{:.0f}", r);
}

std::string format_tolerance(double tolerance) {
  return fmt::format("{:.2f}", tolerance);
}

std::string format_p(double p) {
  if (p < 0.001) return "< 0.001";
  return fmt::format("{:.2g}", p);
}

std::string str_or(const nlohmann::json& object, const char* key, std::string fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

}  // namespace isoharness::reports
