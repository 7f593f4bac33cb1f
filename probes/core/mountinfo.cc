#include "probes/core/mountinfo.h"

#include "probes/core/text_util.h"

namespace isoprobe {

bool MountEntry::read_only() const {
  std::string_view opts = options;
  while (!opts.empty()) {
    std::size_t comma = opts.find(',');
    std::string_view opt = opts.substr(0, comma);
    if (opt == "ro") return true;
    if (comma == std::string_view::npos) break;
    opts.remove_prefix(comma + 1);
  }
  return false;
}

std::string unescape_mount_path(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      std::string_view oct = s.substr(i + 1, 3);
      bool ok = oct.size() == 3;
      for (char c : oct) ok = ok && c >= '0' && c <= '7';
      if (ok) {
        auto v = parse_u64(oct, 8);
        if (v && *v <= 255) {
          out.push_back(static_cast<char>(*v));
          i += 3;
          continue;
        }
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

MountInfo parse_mountinfo(std::string_view text) {
  MountInfo info;
  auto lines = split_lines(text, kMaxMounts + 1);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (trim(lines[i]).empty()) continue;
    auto problem = [&](std::string_view what) {
      if (info.problems.size() < 32)
        info.problems.push_back("line " + std::to_string(i + 1) + ": " + std::string(what));
    };
    if (info.mounts.size() >= kMaxMounts) {
      problem("more than 10000 mounts; the rest is ignored");
      break;
    }
    auto f = split_fields(lines[i], 64);
    // Six fixed fields, optional fields, "-", then fstype, source and super options.
    std::size_t sep = 6;
    while (sep < f.size() && f[sep] != "-") ++sep;
    if (f.size() < 6 || sep >= f.size() || sep + 2 >= f.size()) {
      problem("too few fields or no '-' separator");
      continue;
    }
    auto id = parse_u64(f[0]);
    auto parent = parse_u64(f[1]);
    if (!id || !parent || *id > 0x7fffffff || *parent > 0x7fffffff) {
      problem("mount ids are not numbers");
      continue;
    }
    MountEntry e;
    e.mount_id = static_cast<long>(*id);
    e.parent_id = static_cast<long>(*parent);
    e.root = unescape_mount_path(f[3]);
    e.mount_point = unescape_mount_path(f[4]);
    e.options = std::string(f[5]);
    e.fstype = std::string(f[sep + 1]);
    e.source = unescape_mount_path(f[sep + 2]);
    if (sep + 3 < f.size()) e.super_options = std::string(f[sep + 3]);
    info.mounts.push_back(std::move(e));
  }
  return info;
}

}  // namespace isoprobe
