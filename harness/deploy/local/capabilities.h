// Linux capability names and the default sets container runtimes grant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isoharness::deploy::local {

// "CAP_SYS_ADMIN" -> 21; also accepts "SYS_ADMIN" (Kubernetes spelling). nullopt if unknown.
std::optional<int> capability_number(std::string_view name);

// 21 -> "CAP_SYS_ADMIN".
std::string capability_name(int number);

// containerd's default set (CapEff 00000000a80425fb), as "CAP_*" names in bit order.
const std::vector<std::string>& containerd_default_capabilities();

// Bit mask of a list of "CAP_*" names (unknown names are a bug: call capability_number first).
std::uint64_t capability_mask(const std::vector<std::string>& names);

// 16 lower-case hex digits, as /proc/self/status prints CapEff.
std::string capability_hex(std::uint64_t mask);

}  // namespace isoharness::deploy::local
