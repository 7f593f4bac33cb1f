// The word splitting and the endpoint syntax of an `ssh -J user@jump[:port] user@host -p
// 2222` line (ssh_line.h reads the line itself). Text only, no I/O:
// the words are split like a POSIX shell would (quotes and backslashes, no expansion) and
// anything a shell would treat as code (; | & $ ` < > ( ) and newlines) is refused.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/common/expected.h"
#include "harness/transport/ssh_route.h"

namespace isoharness::transport {

// POSIX-shell-like word splitting without any expansion; refuses what a shell would run
// (; | & $ ` < > ( ) { } * ? ! # and control characters).
Expected<std::vector<std::string>> split_shell_words(std::string_view text);

// "[user@]host[:port]", "[user@][v6addr]:port", "ssh://[user@]host[:port]". The port is 0
// when absent; a port without ssh:// is refused unless allow_port. `item` names the place
// in error messages.
Expected<SshEndpoint> parse_ssh_endpoint(std::string_view text, std::string_view item, bool allow_port);

}  // namespace isoharness::transport
