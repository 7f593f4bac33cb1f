#pragma once
// Which backend deploys a run's sandboxes: the local world on this machine, a deployment
// through the hawk CLI, or `existing` (isoharness check: nothing is deployed, the sandboxes
// are already up). Code compares the enum; its name is made here alone, for the
// `--backend` flag, a deployment profile's `backend:`, the result's context and facts, and
// the default profile's file name (deployments/<name>.yaml).

#include <array>
#include <optional>
#include <string_view>

namespace isoharness::scenario {

enum class BackendKind { local, hawk, existing };

inline constexpr std::array<BackendKind, 3> kBackendKinds{BackendKind::local, BackendKind::hawk,
                                                          BackendKind::existing};

constexpr std::string_view backend_name(BackendKind kind) {
  switch (kind) {
    case BackendKind::local:
      return "local";
    case BackendKind::hawk:
      return "hawk";
    case BackendKind::existing:
      return "existing";
  }
  return "unnamed";  // not reached: every kind is named above, and no backend has this name
}

// The kind a name stands for; nullopt for any other text (the caller says what it accepts).
constexpr std::optional<BackendKind> backend_from_name(std::string_view name) {
  for (BackendKind k : kBackendKinds)
    if (backend_name(k) == name) return k;
  return std::nullopt;
}

}  // namespace isoharness::scenario
