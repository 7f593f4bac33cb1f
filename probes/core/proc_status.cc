#include "probes/core/proc_status.h"

#include "probes/core/text_util.h"

namespace isoprobe {

namespace {

// A capability mask: exactly what the kernel prints, up to 16 hex digits.
std::optional<std::uint64_t> parse_mask(std::string_view v) {
  if (v.empty() || v.size() > 16) return std::nullopt;
  return parse_u64(v, 16);
}

std::optional<std::array<std::int64_t, 4>> parse_ids(std::string_view v) {
  auto f = split_fields(v, 5);
  if (f.size() != 4) return std::nullopt;
  std::array<std::int64_t, 4> ids{};
  for (std::size_t i = 0; i < 4; ++i) {
    auto n = parse_u64(f[i]);
    if (!n || *n > 0xffffffffULL) return std::nullopt;
    ids[i] = static_cast<std::int64_t>(*n);
  }
  return ids;
}

}  // namespace

ProcStatus parse_proc_status(std::string_view text) {
  ProcStatus st;
  auto lines = split_lines(text, 4096);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    std::string_view val = trim(line.substr(colon + 1));
    auto problem = [&](std::string_view what) {
      if (st.problems.size() < 32)
        st.problems.push_back("line " + std::to_string(i + 1) + ": " + std::string(key) + ": " +
                              std::string(what));
    };
    std::optional<std::uint64_t>* mask = nullptr;
    if (key == "CapInh")
      mask = &st.cap_inh;
    else if (key == "CapPrm")
      mask = &st.cap_prm;
    else if (key == "CapEff")
      mask = &st.cap_eff;
    else if (key == "CapBnd")
      mask = &st.cap_bnd;
    else if (key == "CapAmb")
      mask = &st.cap_amb;
    if (mask) {
      *mask = parse_mask(val);
      if (!*mask) problem("not a 64-bit hex mask");
    } else if (key == "NoNewPrivs" || key == "Seccomp") {
      auto n = parse_u64(val);
      if (!n || *n > 2) {
        problem("not 0, 1 or 2");
        continue;
      }
      (key == "Seccomp" ? st.seccomp : st.no_new_privs) = static_cast<int>(*n);
    } else if (key == "Uid" || key == "Gid") {
      auto ids = parse_ids(val);
      if (!ids) problem("expected four ids");
      (key == "Uid" ? st.uid : st.gid) = ids;
    } else if (key == "Groups") {
      std::vector<std::int64_t> groups;
      bool bad = false;
      for (auto f : split_fields(val, 65537)) {
        auto n = parse_u64(f);
        if (!n || *n > 0xffffffffULL) {
          bad = true;
          break;
        }
        groups.push_back(static_cast<std::int64_t>(*n));
      }
      if (bad)
        problem("not a list of ids");
      else
        st.groups = std::move(groups);
    }
  }
  return st;
}

}  // namespace isoprobe
