// `hawk` output holding the ssh command of a sandbox, read by the transport's ssh line parser
// (harness/transport/ssh_line.h) with no default users and with the profile's and the local
// user's: an accepted line always names a host, a port in range and, once defaults are
// given, a user at both ends. The target keeps the hawk name: the platform's output is what
// it stands for.
#include "harness/transport/ssh_line.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

void check(const isoharness::Expected<isoharness::transport::SshLine>& line, bool users_known) {
  if (!line) return;
  for (const auto* end : {&line->route.jump, &line->route.sandbox}) {
    if (end->host.empty() || end->port < 1 || end->port > 65535) __builtin_trap();
    if (users_known && end->user.empty()) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace transport = isoharness::transport;
  const auto text = isoharness::fuzz::as_text(data, size);
  check(transport::parse_ssh_line(text), false);
  check(
      transport::parse_ssh_line(text, {.jump_user = "bastion", .sandbox_user = "agent", .local_user = "ops"}),
      true);
  return 0;
}
