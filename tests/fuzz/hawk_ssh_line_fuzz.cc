// `hawk` output holding the ssh command of a sandbox (harness/deploy/hawk/ssh_line.h).
// Registered in CMakeLists.txt only when the hawk backend's sources are in the tree.
#include "harness/deploy/hawk/ssh_line.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto line = isoharness::deploy::hawk::parse_ssh_line(isoharness::fuzz::as_text(data, size));
  if (!line) return 0;
  for (const auto* end : {&line->route.jump, &line->route.sandbox}) {
    if (end->host.empty() || end->port < 1 || end->port > 65535) __builtin_trap();
  }
  return 0;
}
