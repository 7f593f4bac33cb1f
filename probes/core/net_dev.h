// Parser for /proc/net/dev: the interface names of our network namespace.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace isoprobe {

// Names in file order; the two header lines and malformed lines are skipped.
std::vector<std::string> parse_net_dev(std::string_view text);

}  // namespace isoprobe
