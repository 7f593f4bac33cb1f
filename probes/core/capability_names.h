// Linux capability numbers and their names (include/uapi/linux/capability.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace isoprobe {

// "CAP_SYS_ADMIN" for 21; "CAP_<n>" for a number this table does not know.
std::string capability_name(int bit);

// Names of every set bit, lowest first.
std::vector<std::string> capability_names(std::uint64_t mask);

}  // namespace isoprobe
