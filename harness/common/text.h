#pragma once
// Small text and file helpers every module shares: one trim, one atomic file write.

#include <string>
#include <string_view>

#include "harness/common/expected.h"

namespace isoharness::common {

// s without leading and trailing ASCII whitespace (space, tab, CR, LF, VT, FF).
std::string_view trim(std::string_view s);

// Writes text to "<path>.tmp-<pid>", flushes it and renames it over path, so a reader sees
// the old file or the whole new one, never half of it. On failure the temporary file is
// removed and the error names the file and the cause.
Status write_file_atomically(const std::string& path, std::string_view text);

}  // namespace isoharness::common
