// The tables of published escapes that runtime_version judges a sandbox's runtime stack
// against, one data file per component, shipped with the tool in one folder
// (data/runtime-escapes/<component>.txt in the source tree,
// <prefix>/share/isoharness/runtime-escapes/ installed; an operator's own folder through
// ISOHARNESS_RUNTIME_ESCAPES; found like every shipped file, harness/common/install_paths.h).
// Parsing is separate from reading and never throws; versions compare as Debian's
// (debian_version.h).
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/common/expected.h"

namespace isoharness::verify {

// The parts of a sandbox's runtime stack that have a table: the CRI runtime, the OCI
// runtimes, and the NVIDIA Container Toolkit's hooks.
enum class RuntimeComponent { containerd, runc, crun, runsc, nvidia_container_toolkit };
inline constexpr std::array<RuntimeComponent, 5> kRuntimeComponents{
    RuntimeComponent::containerd, RuntimeComponent::runc, RuntimeComponent::crun, RuntimeComponent::runsc,
    RuntimeComponent::nvidia_container_toolkit};

// "containerd", "runc", "crun", "runsc", "nvidia-container-toolkit" (the table's file name
// without ".txt", and the component word of accepted_runtime_escapes).
std::string_view component_name(RuntimeComponent c);
std::optional<RuntimeComponent> component_named(std::string_view name);

struct FixCarrier {
  std::string where;    // "debian/bookworm"
  std::string version;  // "1.1.5+ds1-1+deb12u1"
};

struct RuntimeEscape {
  std::string cve;
  std::string what;
  std::vector<std::string> fixed;  // one upstream version per release branch
  std::vector<FixCarrier> carriers;
  std::string source;   // where the versions were checked ("" in an operator's table that names none)
  std::string seen_by;  // the check that sees the escape's effect from inside; "" when none
};

struct EscapeTable {
  RuntimeComponent component = RuntimeComponent::runc;
  std::vector<RuntimeEscape> escapes;
  std::string reviewed;        // "2026-12-07"
  long long reviewed_day = 0;  // days since 1970-01-01
  std::string source;          // the file it was read from, for the evidence
};

// One table's text. Every bad line is reported as "<where>:<line>: why"; a table without
// a `reviewed: YYYY-MM-DD` line, with a `component:` line naming another component, or
// with no escape and no `escapes: none` line fails too.
Expected<EscapeTable> parse_escape_table(RuntimeComponent component, std::string_view text,
                                         std::string_view where);

// The tables of one folder, each <dir>/<component>.txt (at most 1 MiB); a table that
// cannot be read or parsed is its component's error.
struct EscapeTables {
  std::map<RuntimeComponent, Expected<EscapeTable>> tables;
  const Expected<EscapeTable>& of(RuntimeComponent c) const;
};
EscapeTables read_escape_tables(const std::string& dir);

// The folder this process resolves (read once); when it cannot be found every
// component's table is that error.
const EscapeTables& shipped_escape_tables();

// A version word as Debian writes it: a leading 'v' dropped and '-' read as '~'
// ("v1.5.0-rc.3" -> "1.5.0~rc.3"), so a release candidate sorts before its release.
std::string upstream_as_debian(std::string_view v);

// The listed fix of `upstream`'s release branch it reaches ("1.3.3"), or, on a branch later
// than every listed one, the latest fix; "" when the version is open to the escape.
// Unbranched (runsc's dated releases): the earliest listed fix it reaches.
std::string fixed_by(const RuntimeEscape& escape, std::string_view upstream, bool branched = true);

// The carrier whose package `package_version` is (or is a later revision of); nullptr if none.
const FixCarrier* carried_by(const RuntimeEscape& escape, std::string_view package_version);

// A runsc release read from its version word: upstream "release-20240513.0", Debian's
// "0.0~20221219.0" (with or without a "-revision"), or "20240513.0".
struct RunscRelease {
  std::string version;  // "20240513.0", how runsc versions compare
  std::string date;     // "2024-05-13"
  long long day = 0;    // days since 1970-01-01
};
std::optional<RunscRelease> runsc_release_of(std::string_view version);

// A table whose `reviewed:` date is more than this many days before the run is named (in
// runtime_version's reason and among the run's findings); not a failure.
inline constexpr int kEscapeTableMaxAgeDays = 180;

// "the runc escape table <file> was last reviewed <date>, N days ago (more than 180)", or ""
// when it was reviewed within kEscapeTableMaxAgeDays of `today` (days since 1970-01-01).
std::string stale_table_note(const EscapeTable& table, long long today);
// The same for every table that was read.
std::vector<std::string> stale_escape_tables(const EscapeTables& tables, long long today);

// Days since 1970-01-01 of a "YYYY-MM-DD" date; nullopt when it is not a real date.
std::optional<long long> day_of_date(std::string_view date);

}  // namespace isoharness::verify
