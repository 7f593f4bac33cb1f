// Parser for /proc/<pid>/status: capability masks, no_new_privs, seccomp mode, ids.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isoprobe {

struct ProcStatus {
  std::optional<std::uint64_t> cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb;
  std::optional<int> no_new_privs;                      // "NoNewPrivs:"
  std::optional<int> seccomp;                           // "Seccomp:" 0 none, 1 strict, 2 filter
  std::optional<std::array<std::int64_t, 4>> uid, gid;  // real, effective, saved, filesystem
  std::optional<std::vector<std::int64_t>> groups;
  std::vector<std::string> problems;  // "line N: ..." for every field that did not parse
};

// Never throws; unknown keys are ignored, malformed known keys are listed in problems.
ProcStatus parse_proc_status(std::string_view text);

}  // namespace isoprobe
