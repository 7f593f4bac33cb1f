#include "probes/core/text_util.h"

#include <limits>

namespace isoprobe {

std::vector<std::string_view> split_lines(std::string_view text, std::size_t max_lines) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size() && lines.size() < max_lines) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::vector<std::string_view> split_fields(std::string_view line, std::size_t max_fields) {
  std::vector<std::string_view> fields;
  std::size_t i = 0;
  while (i < line.size() && fields.size() < max_fields) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size()) break;
    std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

std::string_view trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

std::optional<std::uint64_t> parse_u64(std::string_view s, int base) {
  if (s.empty()) return std::nullopt;
  std::uint64_t v = 0;
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    if (d >= base) return std::nullopt;
    if (v > (max - static_cast<std::uint64_t>(d)) / static_cast<std::uint64_t>(base)) return std::nullopt;
    v = v * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(d);
  }
  return v;
}

std::optional<std::int64_t> parse_i64(std::string_view s) {
  bool neg = !s.empty() && s.front() == '-';
  if (neg) s.remove_prefix(1);
  auto u = parse_u64(s, 10);
  if (!u) return std::nullopt;
  if (neg) {
    if (*u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1) return std::nullopt;
    return static_cast<std::int64_t>(0 - *u);
  }
  if (*u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
  return static_cast<std::int64_t>(*u);
}

std::optional<std::uint32_t> parse_ipv4(std::string_view s) {
  std::uint32_t out = 0;
  for (int part = 0; part < 4; ++part) {
    std::size_t dot = s.find('.');
    std::string_view piece = part == 3 ? s : s.substr(0, dot);
    if (part < 3 && dot == std::string_view::npos) return std::nullopt;
    if (piece.empty() || piece.size() > 3) return std::nullopt;
    if (piece.size() > 1 && piece.front() == '0') return std::nullopt;  // no octal look-alikes
    auto v = parse_u64(piece, 10);
    if (!v || *v > 255) return std::nullopt;
    out = (out << 8) | static_cast<std::uint32_t>(*v);
    if (part < 3) s.remove_prefix(dot + 1);
  }
  return out;
}

std::string format_ipv4(std::uint32_t a) {
  return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 0xff) + "." +
         std::to_string((a >> 8) & 0xff) + "." + std::to_string(a & 0xff);
}

std::string hex16(std::uint64_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = kDigits[v & 0xf];
    v >>= 4;
  }
  return out;
}

void Evidence::append(std::string_view s) {
  static constexpr std::string_view kCut = "\n[evidence truncated]";
  if (truncated_) return;
  std::size_t room = kMaxEvidence - kCut.size();
  if (text_.size() + s.size() <= room) {
    text_.append(s);
    return;
  }
  text_.append(s.substr(0, room > text_.size() ? room - text_.size() : 0));
  text_.append(kCut);
  truncated_ = true;
}

void Evidence::add(std::string_view label, std::string_view text) {
  if (!text_.empty() && text_.back() != '\n') append("\n");
  append("== ");
  append(label);
  append(" ==\n");
  append(text);
}

void Evidence::add_line(std::string_view text) {
  if (!text_.empty() && text_.back() != '\n') append("\n");
  append(text);
}

}  // namespace isoprobe
