#include "probes/core/kallsyms.h"

#include "probes/core/text_util.h"

namespace isoprobe {

KallsymsClass classify_kallsyms(std::string_view text) {
  KallsymsClass c;
  for (auto line : split_lines(text)) {
    if (trim(line).empty()) continue;
    auto f = split_fields(line, 4);
    if (f.size() < 3 || f[0].size() > 16 || f[1].size() != 1) {
      ++c.malformed;
      continue;
    }
    auto addr = parse_u64(f[0], 16);
    if (!addr) {
      ++c.malformed;
      continue;
    }
    ++c.lines;
    if (*addr != 0) ++c.nonzero;
  }
  if (c.lines == 0)
    c.state = "empty";
  else if (c.nonzero == 0)
    c.state = "zeroed";
  else
    c.state = "populated";
  return c;
}

}  // namespace isoprobe
