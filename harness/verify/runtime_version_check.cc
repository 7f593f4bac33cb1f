// runtime_version: the runc a sandbox runs under against the table of runc's published
// escapes (runc_escapes.h, a data file shipped with the tool). The version comes from the
// sandbox's facts: locally `runc --version` as the backend ran it ("runc version 1.1.12",
// and on a distribution's build "commit: <package version>"); on a deployment the node
// image the profile declares (facts.node_image), since from inside a sandbox the node's
// runtime cannot be observed. A runc is open to an escape unless its upstream version
// reaches the fix of its release branch or its package carries the fix (a listed
// distribution package or a later revision of it). A pass names every CVE it checked and
// what each rested on; a version that cannot be read fails.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/common/json_read.h"
#include "harness/verify/checks_internal.h"
#include "harness/verify/debian_version.h"
#include "harness/verify/runc_escapes.h"

namespace isoharness::verify {

namespace {

struct RuncSeen {
  std::string upstream;  // as Debian writes it ("1.0.0~rc6")
  std::string package;   // the distribution package version, "" when none is known
  std::string observed;  // for the evidence
};

// The word after `marker` on its line; "" when absent.
std::string word_after(const std::string& text, const std::string& marker) {
  const auto at = text.find(marker);
  if (at == std::string::npos) return "";
  const auto from = at + marker.size();
  const auto end = text.find_first_of(" \t\r\n;,", from);
  return text.substr(from, end == std::string::npos ? std::string::npos : end - from);
}

RuncSeen seen_in(const deploy::SandboxFacts& facts) {
  RuncSeen seen;
  if (const auto& image = facts.node_image) {
    seen.upstream = runc_version_as_debian(image->runc_version);
    seen.package = image->runc_package;
    seen.observed = fmt::format("node image {} (declared by the deployment profile): runc {}{}", image->name,
                                image->runc_version, seen.package.empty() ? "" : ", package " + seen.package);
    return seen;
  }
  seen.observed = facts.runtime_version;
  seen.upstream = runc_version_as_debian(word_after(seen.observed, "runc version "));
  // A distribution's build names its package version where upstream names a commit.
  const std::string commit = word_after(seen.observed, "commit: ");
  if (debian_version_shape(commit)) seen.package = commit;
  return seen;
}

// One escape judged: what it rested on ("" = open), into `checked` or `open`.
void judge(const RuncEscape& e, const RuncSeen& seen, std::string& checked, std::string& open) {
  const std::string fix = fixed_by(e, seen.upstream);
  const FixCarrier* carrier = fix.empty() && !seen.package.empty() ? carried_by(e, seen.package) : nullptr;
  const std::string fixes = fmt::format("{}", fmt::join(e.fixed, ", "));
  if (!fix.empty() || carrier) {
    checked +=
        fmt::format("{}{} ({})", checked.empty() ? "" : "; ", e.cve,
                    carrier ? fmt::format("{} package {} carries the fix", carrier->where, carrier->version)
                            : "fixed in " + fix);
    return;
  }
  open += fmt::format("{}{} ({}; fixed in {})", open.empty() ? "" : "; ", e.cve, e.what, fixes);
}

}  // namespace

CheckResult check_runtime_version(const deploy::SandboxFacts& facts, const Expected<RuncEscapeTable>& table,
                                  const AcceptedEscapes& accepted) {
  if (facts.runtime == "runsc")
    return detail::not_applicable("runtime_version", "gVisor: runc's escapes do not apply to runsc",
                                  facts.runtime_version);
  if (!facts.node_image && facts.runtime_version.empty())
    return detail::not_applicable("runtime_version",
                                  "not observable from inside the sandbox: the deployment reports no runtime "
                                  "version (declare the nodes' image and runc in the profile's node_image:)");
  const RuncSeen seen = seen_in(facts);
  if (!table)
    return detail::make("runtime_version", false, "runc judged against the runc escape table", seen.observed,
                        "runtime_version: cannot judge: " + table.error().message);
  if (!debian_version_shape(seen.upstream))
    return detail::make("runtime_version", false, "a runc version the table can judge", seen.observed,
                        "runtime_version: cannot read a runc version from what the deployment reports");
  std::string checked, open, known;
  for (const auto& e : table->escapes) {
    const auto it = accepted.find(e.cve);
    if (it == accepted.end()) {
      judge(e, seen, checked, open);
      continue;
    }
    std::string open_one;
    judge(e, seen, checked, open_one);
    if (!open_one.empty())
      known += fmt::format("{}{}, accepted by the deployment profile: {}", known.empty() ? "" : "; ",
                           open_one, it->second);
  }
  const std::string expected = fmt::format("runc {} with the fixes of the escapes in {}", seen.upstream,
                                           table->source.empty() ? "the runc escape table" : table->source);
  if (!open.empty())
    return detail::make("runtime_version", false, expected, seen.observed,
                        "runtime_version: the runtime is open to a published escape (escape class: runc "
                        "escapes): " +
                            open);
  if (!known.empty())
    return detail::make("runtime_version", true, expected, seen.observed,
                        "known risk: open to " + known + (checked.empty() ? "" : "; checked " + checked));
  return detail::make("runtime_version", true, expected, seen.observed, "checked " + checked);
}

CheckResult check_runtime_version(const deploy::SandboxFacts& facts, const AcceptedEscapes& accepted) {
  return check_runtime_version(facts, shipped_runc_escapes(), accepted);
}

}  // namespace isoharness::verify
