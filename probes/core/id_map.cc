#include "probes/core/id_map.h"

#include "probes/core/text_util.h"

namespace isoprobe {

bool IdMap::is_identity() const {
  return ranges.size() == 1 && ranges[0][0] == 0 && ranges[0][1] == 0 && ranges[0][2] == 4294967295ULL;
}

IdMap parse_id_map(std::string_view text) {
  IdMap map;
  auto lines = split_lines(text, kMaxIdMapLines + 1);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (trim(lines[i]).empty()) continue;
    auto problem = [&](std::string_view what) {
      if (map.problems.size() < 16)
        map.problems.push_back("line " + std::to_string(i + 1) + ": " + std::string(what));
    };
    if (map.ranges.size() >= kMaxIdMapLines) {
      problem("more ranges than the kernel allows; the rest is ignored");
      break;
    }
    auto f = split_fields(lines[i], 4);
    if (f.size() != 3) {
      problem("expected three numbers");
      continue;
    }
    std::array<std::uint64_t, 3> r{};
    bool ok = true;
    for (std::size_t k = 0; k < 3; ++k) {
      auto v = parse_u64(f[k]);
      if (!v || *v > 0xffffffffULL) {
        ok = false;
        break;
      }
      r[k] = *v;
    }
    if (!ok) {
      problem("not 32-bit ids");
      continue;
    }
    map.ranges.push_back(r);
  }
  return map;
}

}  // namespace isoprobe
