#include "workloads/registry.h"

#include <set>

namespace isoprobe::workloads {

namespace {

constexpr const Workload* kAll[] = {
#define ISOPROBE_WORKLOAD(descriptor) &(descriptor),
#include "workloads/workload_list.h"
#undef ISOPROBE_WORKLOAD
};

bool is_lower_snake_case(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  if (name.front() < 'a' || name.front() > 'z') return false;
  if (name.back() == '_') return false;
  char previous = 0;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok || (c == '_' && previous == '_')) return false;
    previous = c;
  }
  return true;
}

}  // namespace

std::span<const Workload* const> registered_workloads() {
  return kAll;
}

std::optional<std::string> registry_problem(std::span<const Workload* const> list) {
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Workload* w = list[i];
    std::string where = "workload #" + std::to_string(i);
    if (w == nullptr) return where + " is null";
    std::string name(w->name);
    if (!is_lower_snake_case(w->name)) {
      return where + " '" + name + "': name is not lower_snake_case";
    }
    if (!seen.insert(w->name).second) return where + " '" + name + "': duplicate name";
    if (w->run == nullptr) return where + " '" + name + "': no run function";
    if (w->description.empty()) return where + " '" + name + "': no description";
    if (w->family.empty()) return where + " '" + name + "': no family";
    if (w->fixed_iterations < 0) return where + " '" + name + "': negative fixed_iterations";
  }
  return std::nullopt;
}

const Workload* find_workload(std::string_view name) {
  for (const Workload* w : kAll) {
    if (w->name == name) return w;
  }
  return nullptr;
}

}  // namespace isoprobe::workloads
