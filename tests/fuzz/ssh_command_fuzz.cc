// The `ssh -J jump sandbox` command line a backend hands over (transport's parser): the
// route it yields must name hosts and ports in range.
#include "harness/transport/ssh_command.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto route = isoharness::transport::parse_ssh_command(isoharness::fuzz::as_text(data, size));
  if (!route) return 0;
  for (const auto* end : {&route->jump, &route->sandbox}) {
    if (end->host.empty() || end->port < 1 || end->port > 65535) __builtin_trap();
  }
  return 0;
}
