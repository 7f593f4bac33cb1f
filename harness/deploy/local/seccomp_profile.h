// Converts the container engines' default seccomp profile (Debian's
// /usr/share/containers/seccomp.json: defaultAction, archMap, syscalls[] with
// includes/excludes on caps, arches and minKernel) into OCI's linux.seccomp shape for
// one container: rules whose conditions do not hold for this architecture, kernel and
// capability set are left out, exactly as containerd does when it loads the profile.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "harness/common/expected.h"

namespace isoharness::deploy::local {

struct SeccompTarget {
  std::string go_arch = "amd64";          // the profile's arch names are Go's (amd64, arm64, ...)
  std::string kernel_release;             // uname -r, e.g. "6.1.0-13-amd64"; empty = ignore minKernel
  std::vector<std::string> capabilities;  // the container's bounding set ("CAP_*")
};

// The default profile's path on Debian (package golang-github-containers-common).
inline constexpr const char* kContainersSeccompPath = "/usr/share/containers/seccomp.json";

// Fails (with the offending key) when the profile is not in the expected shape or names
// no architecture for the target.
Expected<nlohmann::json> convert_seccomp_profile(const nlohmann::json& profile, const SeccompTarget& target);

// Reads and converts the profile at `path` (bounded read). The error names the path.
Expected<nlohmann::json> load_default_seccomp(const std::string& path, const SeccompTarget& target);

// "6.1.0-13" >= "5.8"? Compares major.minor only (the profile's granularity).
bool kernel_at_least(std::string_view release, std::string_view minimum);

}  // namespace isoharness::deploy::local
