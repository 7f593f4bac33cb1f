// Small pure helpers over text shared by the parsers: splitting lines, trimming,
// strict number parsing and bounded evidence.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isoprobe {

// Evidence attached to one observation is capped at this many bytes (the contract's 4 KiB).
inline constexpr std::size_t kMaxEvidence = 4096;

// Lines of text without their '\n'; a trailing unterminated line is kept. At most
// max_lines are returned (hostile input cannot make this unbounded).
std::vector<std::string_view> split_lines(std::string_view text, std::size_t max_lines = 1'000'000);

// Fields separated by runs of spaces or tabs.
std::vector<std::string_view> split_fields(std::string_view line, std::size_t max_fields = 4096);

std::string_view trim(std::string_view s);

// Whole string must be digits of the base; nullopt on empty, junk or overflow.
std::optional<std::uint64_t> parse_u64(std::string_view s, int base = 10);
std::optional<std::int64_t> parse_i64(std::string_view s);

// Dotted-quad IPv4 to a host-order number; nullopt for anything else.
std::optional<std::uint32_t> parse_ipv4(std::string_view s);
std::string format_ipv4(std::uint32_t a);

// 16 lowercase hex digits, as /proc/self/status prints capability masks.
std::string hex16(std::uint64_t v);

// Appends labelled pieces of raw text and never grows past kMaxEvidence bytes; a cut
// is marked so a reader knows the text is partial.
class Evidence {
 public:
  void add(std::string_view label, std::string_view text);
  void add_line(std::string_view text);
  const std::string& str() const { return text_; }
  bool truncated() const { return truncated_; }

 private:
  void append(std::string_view s);
  std::string text_;
  bool truncated_ = false;
};

}  // namespace isoprobe
