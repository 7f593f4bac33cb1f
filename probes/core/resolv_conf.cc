#include "probes/core/resolv_conf.h"

#include "probes/core/text_util.h"

namespace isoprobe {

ResolvConf parse_resolv_conf(std::string_view text) {
  ResolvConf rc;
  auto lines = split_lines(text, 4096);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = trim(lines[i]);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    auto f = split_fields(line, 3);
    if (f.empty() || f[0] != "nameserver") continue;
    auto skip = [&](std::string_view why) {
      if (rc.skipped.size() < 16)
        rc.skipped.push_back("line " + std::to_string(i + 1) + ": " + std::string(why));
    };
    if (f.size() < 2) {
      skip("nameserver without an address");
      continue;
    }
    auto addr = parse_ipv4(f[1]);
    if (!addr) {
      skip("not an IPv4 address (IPv6 resolvers are not supported): " + std::string(f[1].substr(0, 64)));
      continue;
    }
    if (rc.nameservers.size() < 8) rc.nameservers.push_back(*addr);
  }
  return rc;
}

}  // namespace isoprobe
