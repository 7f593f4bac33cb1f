// Where isoharness finds the files it ships: the default scenarios (with their deployment
// profiles), the isoprobe bundle (with the static getpid loop beside it) and the world
// helper. Every one is looked up the way installed tools do, first match wins:
//
//   1. the command-line flag, when the command has one;
//   2. an environment variable (ISOHARNESS_SCENARIOS_DIR, ISOHARNESS_PROBE_DIR,
//      ISOHARNESS_POSTURE_AGENT_DIR, ISOHARNESS_WORLD_HELPER, ISOHARNESS_RUNTIME_ESCAPES);
//   3. the install prefix of the running binary: /proc/self/exe is <prefix>/bin/isoharness,
//      data under <prefix>/share/isoharness, programs under <prefix>/lib/isoharness;
//   4. the build tree this binary was compiled in, and its source tree, but only while the
//      running binary itself lives in that build tree: an installed copy never reads it.
//
// A flag or an environment variable that is set but names nothing usable is an answer, not
// a miss: the lookup stops there and says so, rather than quietly taking the next source.
// Nothing here creates or writes anything; the current directory plays no part.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace isoharness {

enum class PathOrigin { kFlag, kEnvironment, kInstallPrefix, kBuildTree, kNotFound };

// "flag", "environment", "install prefix", "build tree", "not found".
const char* to_string(PathOrigin origin);

// One thing isoharness ships, and where each source keeps it.
struct ShippedPath {
  const char* what;          // "scenarios directory", for messages
  const char* flag;          // "--scenarios-dir", or "" when no command has one
  const char* env_var;       // "ISOHARNESS_SCENARIOS_DIR"
  const char* under_prefix;  // relative to the install prefix
  const char* under_build;   // relative to the build tree, or "" when it lives in the source tree
  const char* under_source;  // relative to the source tree, or ""
  const char* must_contain;  // a file that must exist inside it ("isoprobe"); "" = the path itself
};

extern const ShippedPath kScenariosDir;
extern const ShippedPath kIsoprobeBundle;
extern const ShippedPath kPostureAgent;  // the posture-only static isoprobe that `run` uploads
extern const ShippedPath kWorldHelper;
// The folder of escape tables runtime_version judges by, one <component>.txt each; an
// operator points ISOHARNESS_RUNTIME_ESCAPES at their own folder.
extern const ShippedPath kRuntimeEscapes;

struct ResolvedPath {
  std::string path;  // empty when not found
  PathOrigin origin = PathOrigin::kNotFound;
  std::string source;   // "ISOHARNESS_PROBE_DIR", "install prefix /usr", "source tree /x", ...
  std::string problem;  // why it was not found: every place looked at, how to fix it
  bool found() const { return origin != PathOrigin::kNotFound; }
  // "/usr/share/isoharness/scenarios (install prefix /usr)" or the problem.
  std::string describe() const;
};

// What a lookup depends on. of_this_process() reads /proc/self/exe, the environment and
// the build and source trees compiled into this binary; tests build their own.
struct PathContext {
  std::string exe;        // the running binary, symlinks resolved
  std::string build_dir;  // empty: no build-tree fallback
  std::string source_dir;
  std::function<std::optional<std::string>(const std::string&)> getenv;
  static PathContext of_this_process();
};

// The install prefix when the running binary is <prefix>/bin/<name>; empty otherwise.
std::string install_prefix_of(const std::string& exe);

ResolvedPath resolve_path(const ShippedPath& item, const std::string& flag_value, const PathContext& context);

// The same, for this process.
ResolvedPath resolve_path(const ShippedPath& item, const std::string& flag_value = "");

// Every shipped path as this process resolves it without flags (for `local doctor`).
std::vector<std::pair<const ShippedPath*, ResolvedPath>> resolve_all_shipped_paths();

}  // namespace isoharness
