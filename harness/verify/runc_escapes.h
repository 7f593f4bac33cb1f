// The table of runc's published escapes that runtime_version judges a runc against, read
// from a data file shipped with the tool (data/runc-escapes.txt in the source tree,
// <prefix>/share/isoharness/runc-escapes.txt installed; found like every shipped file,
// harness/common/install_paths.h). Parsing is separate from reading; versions compare as
// Debian's (debian_version.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/common/expected.h"

namespace isoharness::verify {

struct FixCarrier {
  std::string where;    // "debian/bookworm"
  std::string version;  // "1.1.5+ds1-1+deb12u1"
};

struct RuncEscape {
  std::string cve;
  std::string what;
  std::vector<std::string> fixed;  // one upstream version per release branch
  std::vector<FixCarrier> carriers;
};

struct RuncEscapeTable {
  std::vector<RuncEscape> escapes;
  std::string source;  // where it was read from, for the evidence
};

// Every bad line is reported (with its number); a table with none fails too.
Expected<RuncEscapeTable> parse_runc_escapes(std::string_view text);

// The table this process ships (read once); an error names where it looked.
const Expected<RuncEscapeTable>& shipped_runc_escapes();

// runc's own version word as Debian writes it: "1.0.0-rc6" -> "1.0.0~rc6".
std::string runc_version_as_debian(std::string_view v);

// The listed fix of `upstream`'s release branch it reaches ("1.3.3"), or, on a branch later
// than every listed one, the latest fix; "" when the version is open to the escape.
std::string fixed_by(const RuncEscape& escape, std::string_view upstream);

// The carrier whose package `package_version` is (or is a later revision of); nullptr if none.
const FixCarrier* carried_by(const RuncEscape& escape, std::string_view package_version);

}  // namespace isoharness::verify
