// Parser for /etc/resolv.conf: the IPv4 nameservers our own resolver may ask.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace isoprobe {

struct ResolvConf {
  std::vector<std::uint32_t> nameservers;  // IPv4, host order, file order (at most 8)
  std::vector<std::string> skipped;        // "line N: ..." for nameservers we cannot use
};

ResolvConf parse_resolv_conf(std::string_view text);

}  // namespace isoprobe
