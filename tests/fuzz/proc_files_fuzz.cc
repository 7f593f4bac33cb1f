// isoprobe's /proc parsers. The first byte picks the parser, the rest is the file's text:
// 0 status, 1 mountinfo, 2 net/dev, 3 uid/gid map, 4 kallsyms, 5 resolv.conf.
#include "probes/core/id_map.h"
#include "probes/core/kallsyms.h"
#include "probes/core/mountinfo.h"
#include "probes/core/net_dev.h"
#include "probes/core/proc_status.h"
#include "probes/core/resolv_conf.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto text = isoharness::fuzz::as_text(data + 1, size - 1);
  switch (data[0] % 6) {
    case 0: {
      auto st = isoprobe::parse_proc_status(text);
      if (st.groups && st.groups->size() > text.size()) __builtin_trap();
      break;
    }
    case 1: {
      auto mi = isoprobe::parse_mountinfo(text);
      if (mi.mounts.size() > isoprobe::kMaxMounts) __builtin_trap();
      for (const auto& m : mi.mounts) (void)m.read_only();
      (void)isoprobe::unescape_mount_path(text);
      break;
    }
    case 2:
      (void)isoprobe::parse_net_dev(text);
      break;
    case 3: {
      auto map = isoprobe::parse_id_map(text);
      if (map.ranges.size() > isoprobe::kMaxIdMapLines) __builtin_trap();
      (void)map.is_identity();
      break;
    }
    case 4: {
      auto k = isoprobe::classify_kallsyms(text);
      if (k.nonzero > k.lines) __builtin_trap();
      break;
    }
    case 5: {
      auto r = isoprobe::parse_resolv_conf(text);
      if (r.nameservers.size() > 8) __builtin_trap();
      break;
    }
  }
  return 0;
}
