#include "harness/deploy/local/capabilities.h"

#include <array>
#include <cstdio>

#include "harness/common/capability_table.h"
#include "harness/common/error.h"

namespace isoharness::deploy::local {
namespace {

constexpr const auto& kNames = kCapabilityNames;

}  // namespace

std::optional<int> capability_number(std::string_view name) {
  std::string full(name);
  if (full.rfind("CAP_", 0) != 0) full = "CAP_" + full;
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == full) return static_cast<int>(i);
  return std::nullopt;
}

std::string capability_name(int number) {
  ISOHARNESS_CHECK(number >= 0 && number < static_cast<int>(kNames.size()));
  return std::string(kNames[static_cast<std::size_t>(number)]);
}

const std::vector<std::string>& containerd_default_capabilities() {
  static const std::vector<std::string> caps = {
      "CAP_CHOWN",      "CAP_DAC_OVERRIDE", "CAP_FOWNER",      "CAP_FSETID",           "CAP_KILL",
      "CAP_SETGID",     "CAP_SETUID",       "CAP_SETPCAP",     "CAP_NET_BIND_SERVICE", "CAP_NET_RAW",
      "CAP_SYS_CHROOT", "CAP_MKNOD",        "CAP_AUDIT_WRITE", "CAP_SETFCAP",
  };
  return caps;
}

std::uint64_t capability_mask(const std::vector<std::string>& names) {
  std::uint64_t mask = 0;
  for (const auto& n : names) {
    auto bit = capability_number(n);
    ISOHARNESS_CHECK(bit.has_value());
    mask |= std::uint64_t{1} << *bit;
  }
  return mask;
}

std::string capability_hex(std::uint64_t mask) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(mask));
  return buf;
}

}  // namespace isoharness::deploy::local
