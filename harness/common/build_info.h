// The tool's version and the git revision it was built from ("<12 hex>" with "-dirty"
// when tracked files had changed, or "unknown" outside a git checkout). Defined in a
// source file the build writes (cmake/write_build_info.cmake); isoprobe shares it.
#pragma once

const char* isoharness_build_version();
const char* isoharness_build_revision();
