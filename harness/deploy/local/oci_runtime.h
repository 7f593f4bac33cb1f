// The two OCI runtimes the local backend runs sandboxes with. The enum is what the code
// branches on; the name (the runtime's binary, its state directory under the run, and the
// word the profile's runtime_handlers and the sandbox's facts use) is made only here.
#pragma once

#include <optional>
#include <string_view>

namespace isoharness::deploy::local {

enum class OciRuntime { runc, runsc };

inline const char* oci_runtime_name(OciRuntime r) {
  return r == OciRuntime::runsc ? "runsc" : "runc";
}

// "runc" / "runsc"; nullopt for anything else.
inline std::optional<OciRuntime> oci_runtime_from(std::string_view name) {
  if (name == "runc") return OciRuntime::runc;
  if (name == "runsc") return OciRuntime::runsc;
  return std::nullopt;
}

}  // namespace isoharness::deploy::local
