// Classification of /proc/kallsyms text. The file is absent (gVisor builds without it),
// empty (gVisor), or lists symbols whose addresses are all zero (kptr_restrict hides
// them from us) or real (the kernel's layout is visible).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace isoprobe {

struct KallsymsClass {
  std::string state;        // "empty" / "zeroed" / "populated" ("absent" is the caller's)
  std::size_t lines = 0;    // symbol lines seen (within the bounded read)
  std::size_t nonzero = 0;  // lines whose address is not zero
  std::size_t malformed = 0;
};

// A line is "address type name [module]". Any non-zero address makes the file
// "populated"; lines that do not parse are counted but never make it populated.
KallsymsClass classify_kallsyms(std::string_view text);

}  // namespace isoprobe
