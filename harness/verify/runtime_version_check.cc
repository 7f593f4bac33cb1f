// runtime_version: the OCI runtime the deployment reports (the sandbox's facts) against
// the fixed versions of runc's published escapes:
// - CVE-2019-5736 (/proc/self/exe overwrite): runc through 1.0.0-rc6 is affected; the fix
//   shipped in 1.0.0-rc7;
// - CVE-2024-21626 (leaked working-directory fd, "Leaky Vessels"): fixed in 1.1.12.
// Distributions backport fixes without changing the upstream number: a version below the
// fix passes only when its package version is one known to carry the fix (kBackports,
// each read from that package's changelog), else it fails, naming both.
#include <cstdio>
#include <tuple>

#include "harness/common/json_read.h"
#include "harness/verify/checks_internal.h"

namespace isoharness::verify {

namespace {

// major, minor, patch, rc (a release candidate sorts before its release: rc 0 = none).
using Version = std::tuple<int, int, int, int>;

std::optional<Version> parse_runc_version(const std::string& line) {
  const std::string marker = "runc version ";
  const auto at = line.find(marker);
  if (at == std::string::npos) return std::nullopt;
  int major = 0, minor = 0, patch = 0, rc = 0, used = 0;
  const char* text = line.c_str() + at + marker.size();
  if (std::sscanf(text, "%d.%d.%d%n", &major, &minor, &patch, &used) != 3) return std::nullopt;
  if (std::sscanf(text + used, "-rc%d", &rc) != 1 && std::sscanf(text + used, "-rc.%d", &rc) != 1) rc = 0;
  // An rc sorts before the release: 1.0.0-rc6 < 1.0.0.
  return Version{major, minor, patch, rc == 0 ? 1 << 20 : rc};
}

struct Escape {
  const char* cve;
  const char* what;
  Version fixed;
  const char* fixed_text;
};

constexpr Escape kEscapes[] = {
    {"CVE-2019-5736", "/proc/self/exe overwrite", {1, 0, 0, 7}, "1.0.0-rc7"},
    {"CVE-2024-21626", "leaked working-directory fd", {1, 1, 12, 1 << 20}, "1.1.12"},
};

// Distribution packages whose changelog names the fix while keeping an older number.
struct Backport {
  const char* package_version;
  const char* cve;
};
constexpr Backport kBackports[] = {
    {"1.1.5+ds1-1+deb12u1", "CVE-2024-21626"},  // Debian bookworm-security, DSA-5615
};

bool backported(const std::string& line, const char* cve) {
  for (const auto& b : kBackports)
    if (std::string(b.cve) == cve &&
        line.find(std::string("commit: ") + b.package_version) != std::string::npos)
      return true;
  return false;
}

}  // namespace

CheckResult check_runtime_version(const nlohmann::json& facts) {
  const std::string runtime = common::json_string_or(facts, "runtime");
  const std::string line = common::json_string_or(facts, "runtime_version");
  if (runtime == "runsc")
    return detail::not_applicable("runtime_version", "gVisor: runc's escapes do not apply to runsc", line);
  if (line.empty())
    return detail::not_applicable("runtime_version",
                                  "the deployment reports no runtime version (judge the platform's runc "
                                  "version where it publishes one)");
  const auto version = parse_runc_version(line);
  if (!version)
    return detail::make("runtime_version", false, "runc at or above 1.1.12", line,
                        "runtime_version: cannot read a runc version from what the deployment reports");
  std::string affected;
  for (const auto& e : kEscapes)
    if (*version < e.fixed && !backported(line, e.cve))
      affected += std::string(affected.empty() ? "" : "; ") + e.cve + " (" + e.what + ", fixed in " +
                  e.fixed_text + ")";
  return detail::make("runtime_version", affected.empty(),
                      "runc with the fixes of CVE-2019-5736 and CVE-2024-21626", line,
                      affected.empty() ? "the runtime carries the fixes of runc's published escapes"
                                       : "runtime_version: the runtime is open to a published escape (escape "
                                         "class: runc escapes): " +
                                             affected);
}

}  // namespace isoharness::verify
