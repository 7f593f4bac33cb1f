#include "probes/core/registry.h"

#include <set>

namespace isoprobe {

#define ISOPROBE_PROBE(n) ProbeDescriptor n##_probe();
#include "probes/posture/probe_list.h"
#undef ISOPROBE_PROBE

std::span<const ProbeDescriptor> all_probes() {
  static const std::vector<ProbeDescriptor> probes = {
#define ISOPROBE_PROBE(n) n##_probe(),
#include "probes/posture/probe_list.h"
#undef ISOPROBE_PROBE
  };
  return probes;
}

std::vector<std::string> check_registry(std::span<const ProbeDescriptor> probes) {
  std::vector<std::string> problems;
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    const auto& p = probes[i];
    std::string where = "probe #" + std::to_string(i + 1) + " '" + std::string(p.name) + "'";
    if (p.name.empty()) problems.push_back(where + ": empty name");
    if (!seen.insert(p.name).second) problems.push_back(where + ": duplicate name");
    if (!p.run) problems.push_back(where + ": no run function");
    if (p.deadline.count() <= 0) problems.push_back(where + ": deadline must be positive");
    if (p.description.empty()) problems.push_back(where + ": no description");
  }
  return problems;
}

}  // namespace isoprobe
