// The node's view of a sandbox (harness/deploy/node_view.h), as a node agent answers it or
// a file holds it: written outside the harness. Read, then written and read back.
// Invariants: a read view writes without throwing, and reading what it wrote gives the same
// document (nothing read is a fact the text did not state); no list exceeds its bound.
#include <string>

#include "harness/deploy/node_view.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace deploy = isoharness::deploy;
  const auto read = deploy::read_node_view(isoharness::fuzz::as_text(data, size));
  if (!read.view) return 0;
  if (read.view->containers.size() > deploy::kMaxNodeViewContainers) __builtin_trap();
  for (const auto& c : read.view->containers)
    if (c.filesystem.mounts.size() > deploy::kMaxNodeViewList) __builtin_trap();
  const std::string written = deploy::write_node_view(*read.view);
  const auto again = deploy::read_node_view(written);
  if (!again.view || deploy::write_node_view(*again.view) != written) __builtin_trap();
  return 0;
}
