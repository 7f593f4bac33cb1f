#include "workloads/workload.h"

#include <cerrno>
#include <cstring>

namespace isoprobe::workloads {

void fail_with_errno(benchmark::State& state, std::string_view what) {
  int saved = errno;
  std::string message = "error: " + std::string(what) + ": " + std::strerror(saved);
  state.SkipWithError(message.c_str());
}

void fail_with(benchmark::State& state, std::string_view message) {
  std::string text = "error: " + std::string(message);
  state.SkipWithError(text.c_str());
}

}  // namespace isoprobe::workloads
