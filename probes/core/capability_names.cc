#include "probes/core/capability_names.h"

#include <array>
#include <string_view>

namespace isoprobe {

namespace {
constexpr std::array<std::string_view, 41> kNames = {
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_DAC_READ_SEARCH",
    "CAP_FOWNER",
    "CAP_FSETID",
    "CAP_KILL",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETPCAP",
    "CAP_LINUX_IMMUTABLE",
    "CAP_NET_BIND_SERVICE",
    "CAP_NET_BROADCAST",
    "CAP_NET_ADMIN",
    "CAP_NET_RAW",
    "CAP_IPC_LOCK",
    "CAP_IPC_OWNER",
    "CAP_SYS_MODULE",
    "CAP_SYS_RAWIO",
    "CAP_SYS_CHROOT",
    "CAP_SYS_PTRACE",
    "CAP_SYS_PACCT",
    "CAP_SYS_ADMIN",
    "CAP_SYS_BOOT",
    "CAP_SYS_NICE",
    "CAP_SYS_RESOURCE",
    "CAP_SYS_TIME",
    "CAP_SYS_TTY_CONFIG",
    "CAP_MKNOD",
    "CAP_LEASE",
    "CAP_AUDIT_WRITE",
    "CAP_AUDIT_CONTROL",
    "CAP_SETFCAP",
    "CAP_MAC_OVERRIDE",
    "CAP_MAC_ADMIN",
    "CAP_SYSLOG",
    "CAP_WAKE_ALARM",
    "CAP_BLOCK_SUSPEND",
    "CAP_AUDIT_READ",
    "CAP_PERFMON",
    "CAP_BPF",
    "CAP_CHECKPOINT_RESTORE",
};
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
