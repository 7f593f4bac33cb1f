// Parsing the `ssh -J user@jump[:port] user@host -p 2222` command a platform prints (for
// example `hawk human eval ssh-command`) into a route. Text only, no I/O: the words are
// split like a POSIX shell would (quotes and backslashes, no expansion) and anything a
// shell would treat as code (; | & $ ` < > ( ) and newlines) is refused.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/common/expected.h"
#include "harness/deploy/backend.h"

namespace isoharness::transport {

// Understands: `-J [user@]host[:port]` and `-Jhost`, `ssh://user@host[:port]` in -J or as
// the destination, `-o ProxyJump=…`, `-o Port=…`, `-o User=…`, `-p N`, `-pN`, `-l user`,
// `[v6addr]:port`, combined flags (`-tt`, `-4A`), ssh's other options (skipped with their
// argument), a leading `$ ` prompt and a path to ssh. Refused: no -J, several jump hops,
// a remote command, a missing user, bad ports or host names, shell syntax. Host keys are
// left empty: they come from the deployment profile and the backend.
Expected<deploy::SshRoute> parse_ssh_command(std::string_view command);

// POSIX-shell-like word splitting without any expansion; refuses what a shell would run
// (; | & $ ` < > ( ) { } * ? ! # and control characters).
Expected<std::vector<std::string>> split_shell_words(std::string_view text);

// "[user@]host[:port]", "[user@][v6addr]:port", "ssh://[user@]host[:port]". The port is 0
// when absent; a port without ssh:// is refused unless allow_port. `item` names the place
// in error messages.
Expected<deploy::SshEndpoint> parse_ssh_endpoint(std::string_view text, std::string_view item,
                                                 bool allow_port);

}  // namespace isoharness::transport
