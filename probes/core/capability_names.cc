#include "probes/core/capability_names.h"

#include <array>
#include <string_view>

#include "harness/common/capability_table.h"

namespace isoprobe {

namespace {
constexpr const auto& kNames = isoharness::kCapabilityNames;
}  // namespace

std::string capability_name(int bit) {
  if (bit >= 0 && static_cast<std::size_t>(bit) < kNames.size())
    return std::string(kNames[static_cast<std::size_t>(bit)]);
  return "CAP_" + std::to_string(bit);
}

std::vector<std::string> capability_names(std::uint64_t mask) {
  std::vector<std::string> out;
  for (int bit = 0; bit < 64; ++bit) {
    if (mask & (std::uint64_t{1} << bit)) out.push_back(capability_name(bit));
  }
  return out;
}

}  // namespace isoprobe
