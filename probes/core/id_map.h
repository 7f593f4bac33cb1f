// Parser for /proc/self/uid_map and gid_map: lines "inside outside count".
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace isoprobe {

struct IdMap {
  std::vector<std::array<std::uint64_t, 3>> ranges;  // [inside, outside, count]
  std::vector<std::string> problems;

  // The initial namespace's map: one range 0 0 4294967295.
  bool is_identity() const;
};

inline constexpr std::size_t kMaxIdMapLines = 340;  // the kernel's limit on ranges

IdMap parse_id_map(std::string_view text);

}  // namespace isoprobe
