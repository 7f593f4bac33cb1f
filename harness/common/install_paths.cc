#include "harness/common/install_paths.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

// Set by harness/common/CMakeLists.txt from cmake/isoharness_install.cmake, so the install
// rules and this lookup name the same directories.
#ifndef ISOHARNESS_INSTALL_DATADIR
#error "ISOHARNESS_INSTALL_DATADIR must be defined by the build"
#endif
#ifndef ISOHARNESS_INSTALL_LIBDIR
#error "ISOHARNESS_INSTALL_LIBDIR must be defined by the build"
#endif

namespace isoharness {

namespace fs = std::filesystem;

const ShippedPath kScenariosDir{"scenarios directory",
                                "--scenarios-dir",
                                "ISOHARNESS_SCENARIOS_DIR",
                                ISOHARNESS_INSTALL_DATADIR "/scenarios",
                                "",
                                "scenarios",
                                ""};
const ShippedPath kIsoprobeBundle{"isoprobe bundle",
                                  "--isoprobe-bundle",
                                  "ISOHARNESS_PROBE_DIR",
                                  ISOHARNESS_INSTALL_LIBDIR "/isoprobe-bundle",
                                  "probes/isoprobe-bundle",
                                  "",
                                  "isoprobe"};
const ShippedPath kPostureAgent{"posture agent",
                                "--isoprobe-bundle",
                                "ISOHARNESS_POSTURE_AGENT_DIR",
                                ISOHARNESS_INSTALL_LIBDIR "/isoprobe-posture",
                                "probes/isoprobe-posture",
                                "",
                                "isoprobe"};
const ShippedPath kWorldHelper{"world helper",
                               "",
                               "ISOHARNESS_WORLD_HELPER",
                               ISOHARNESS_INSTALL_LIBDIR "/isoharness-world-helper",
                               "harness/cli/isoharness-world-helper",
                               "",
                               ""};

const ShippedPath kRuntimeEscapes{"runtime escape tables",
                                  "",
                                  "ISOHARNESS_RUNTIME_ESCAPES",
                                  ISOHARNESS_INSTALL_DATADIR "/runtime-escapes",
                                  "",
                                  "data/runtime-escapes",
                                  "runc.txt"};

const char* to_string(PathOrigin origin) {
  switch (origin) {
    case PathOrigin::kFlag:
      return "flag";
    case PathOrigin::kEnvironment:
      return "environment";
    case PathOrigin::kInstallPrefix:
      return "install prefix";
    case PathOrigin::kBuildTree:
      return "build tree";
    case PathOrigin::kNotFound:
      break;
  }
  return "not found";
}

std::string ResolvedPath::describe() const {
  return found() ? path + " (" + source + ")" : "not found: " + problem;
}

namespace {

bool usable(const ShippedPath& item, const fs::path& p) {
  std::error_code ec;
  return *item.must_contain ? fs::exists(p / item.must_contain, ec) : fs::exists(p, ec);
}

std::string wanted(const ShippedPath& item, const std::string& p) {
  return *item.must_contain ? (fs::path(p) / item.must_contain).string() : p;
}

// Whether `inner` is `outer` or lies under it (both made absolute and normal first).
bool is_within(const std::string& inner, const std::string& outer) {
  std::error_code ec;
  const fs::path a = fs::weakly_canonical(inner, ec);
  const fs::path b = fs::weakly_canonical(outer, ec);
  if (b.empty()) return false;
  auto mismatch = std::mismatch(b.begin(), b.end(), a.begin(), a.end());
  return mismatch.first == b.end();
}

std::optional<ResolvedPath> explicit_choice(const ShippedPath& item, const std::string& value,
                                            PathOrigin origin, const std::string& source) {
  if (value.empty()) return std::nullopt;
  ResolvedPath r;
  if (usable(item, value)) {
    r.path = value;
    r.origin = origin;
    r.source = source;
  } else {
    r.problem = source + " names " + value + ", but " + wanted(item, value) + " does not exist";
  }
  return r;
}

}  // namespace

std::string install_prefix_of(const std::string& exe) {
  const fs::path dir = fs::path(exe).parent_path();
  if (dir.filename() != "bin") return "";
  return dir.parent_path().string();
}

PathContext PathContext::of_this_process() {
  PathContext c;
  std::error_code ec;
  c.exe = fs::read_symlink("/proc/self/exe", ec).string();
#ifdef ISOHARNESS_BUILD_TREE
  c.build_dir = ISOHARNESS_BUILD_TREE;
  c.source_dir = ISOHARNESS_SOURCE_TREE;
#endif
  c.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  return c;
}

ResolvedPath resolve_path(const ShippedPath& item, const std::string& flag_value,
                          const PathContext& context) {
  if (auto r = explicit_choice(item, flag_value, PathOrigin::kFlag, item.flag)) return *r;
  if (auto v = context.getenv ? context.getenv(item.env_var) : std::nullopt) {
    if (auto r = explicit_choice(item, *v, PathOrigin::kEnvironment, item.env_var)) return *r;
  }
  std::vector<std::string> looked;
  const std::string prefix = install_prefix_of(context.exe);
  if (!prefix.empty()) {
    const std::string p = (fs::path(prefix) / item.under_prefix).string();
    if (usable(item, p)) return ResolvedPath{p, PathOrigin::kInstallPrefix, "install prefix " + prefix, ""};
    looked.push_back(wanted(item, p));
  }
  if (!context.build_dir.empty() && is_within(context.exe, context.build_dir)) {
    const std::string p = *item.under_build ? (fs::path(context.build_dir) / item.under_build).string()
                                            : (fs::path(context.source_dir) / item.under_source).string();
    const std::string tree =
        *item.under_build ? "build tree " + context.build_dir : "source tree " + context.source_dir;
    if (usable(item, p)) return ResolvedPath{p, PathOrigin::kBuildTree, tree, ""};
    looked.push_back(wanted(item, p));
  }
  ResolvedPath r;
  const std::string where = fmt::format("{}", fmt::join(looked, ", "));
  r.problem = std::string("no ") + item.what +
              (where.empty() ? " next to " + context.exe : " (looked for " + where + ")") + "; " +
              (*item.flag ? std::string("pass ") + item.flag + " or " : std::string()) + "set " +
              item.env_var;
  return r;
}

ResolvedPath resolve_path(const ShippedPath& item, const std::string& flag_value) {
  return resolve_path(item, flag_value, PathContext::of_this_process());
}

std::vector<std::pair<const ShippedPath*, ResolvedPath>> resolve_all_shipped_paths() {
  const PathContext context = PathContext::of_this_process();
  std::vector<std::pair<const ShippedPath*, ResolvedPath>> out;
  for (const ShippedPath* item :
       {&kScenariosDir, &kIsoprobeBundle, &kPostureAgent, &kWorldHelper, &kRuntimeEscapes})
    out.emplace_back(item, resolve_path(*item, "", context));
  return out;
}

}  // namespace isoharness
