// Version ordering as Debian's dpkg defines it (deb-version(7)): [epoch:]upstream[-revision].
// Epochs compare as numbers; upstream and revision compare piece by piece, a run of
// non-digits then a run of digits: non-digit runs character by character where `~` sorts
// before everything (even the end of the string), then the end, then letters, then every
// other character; digit runs as numbers. So 1.3.3~rc1 < 1.3.3 < 1.3.3+ds1 < 1.3.3-1.
// runc's own "1.0.0-rc6" is read as Debian packages it, "1.0.0~rc6" (see runtime_escapes.h).
#pragma once

#include <string_view>

namespace isoharness::verify {

// <0, 0 or >0 as a sorts before, with or after b.
int compare_debian_versions(std::string_view a, std::string_view b);

// Whether s has the shape of a version: an optional numeric epoch, then an upstream part
// starting with a digit, of letters, digits and . + ~ - : (at most 64 characters).
bool debian_version_shape(std::string_view s);

}  // namespace isoharness::verify
