#include "harness/runner/framed_answer.h"

#include <string_view>

namespace isoharness::runner {

std::map<std::string, FramedPart> parse_framed(const std::string& text, const std::string& boundary) {
  std::map<std::string, FramedPart> parts;
  if (boundary.empty()) return parts;
  std::size_t start = 0;  // where the current part's output begins
  std::size_t line = 0;
  while (line < text.size()) {
    std::size_t end = text.find('\n', line);
    if (end == std::string::npos) break;  // an unterminated last line is no frame
    const std::string_view l(text.data() + line, end - line);
    if (l.size() > boundary.size() + 1 && l.substr(0, boundary.size()) == boundary &&
        l[boundary.size()] == ' ') {
      const std::string_view rest = l.substr(boundary.size() + 1);
      const auto space = rest.find(' ');
      const std::string name(rest.substr(0, space));
      const std::string code = space == std::string_view::npos ? "" : std::string(rest.substr(space + 1));
      FramedPart p;
      if (!code.empty() && code.size() <= 3 && code.find_first_not_of("0123456789") == std::string::npos)
        p.exit_code = std::stoi(code);
      p.out = text.substr(start, line - start);
      if (!p.out.empty() && p.out.back() == '\n') p.out.pop_back();  // the script's own echo
      parts.emplace(name, std::move(p));
      start = end + 1;
    }
    line = end + 1;
  }
  return parts;
}

}  // namespace isoharness::runner
