#include "probes/core/net_dev.h"

#include "probes/core/text_util.h"

namespace isoprobe {

std::vector<std::string> parse_net_dev(std::string_view text) {
  std::vector<std::string> names;
  auto lines = split_lines(text, 4096);
  for (auto line : lines) {
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // headers have '|' not ':'
    std::string_view name = trim(line.substr(0, colon));
    if (name.empty() || name.size() > 15 || name.find('|') != std::string_view::npos) continue;
    if (name.find_first_of(" /") != std::string_view::npos) continue;
    names.emplace_back(name);
  }
  return names;
}

}  // namespace isoprobe
