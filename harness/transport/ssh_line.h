// The route out of an `ssh -J …` command line: what `hawk human eval ssh-command` prints
// (the hawk backend), or the line a person hands `isoharness check --ssh` (the runner). Its
// layout is someone else's, so it is read the way OpenSSH would read it, and narrowly: find
// the line that starts with `ssh `, accept `-J [user@]host[:port]`, `-p PORT`, `-i FILE`,
// `-o KEY=VALUE` (also `-oKEY=VALUE`), `-l USER` and one `[user@]host`, in any order; accept
// and ignore what only shapes the terminal or logging (`-t`, `-T`, `-q`, `-v`, bundled as
// `-tt` or `-vvv`); refuse by name anything that changes where or how the connection goes
// (forwards, proxies, another config, connection sharing, a remote command). A host named
// without a user gets one the way OpenSSH gives it: from the caller's settings (SshLineRules),
// else the local user. Messages start with "ssh-command:"; where no user can be found they
// name the caller's setting for it (SshLineRules), if the caller has one. Text only, no I/O.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/common/expected.h"
#include "harness/transport/ssh_route.h"

namespace isoharness::transport {

struct SshLine {
  SshRoute route;             // host keys empty: they come from the profile or known_hosts
  std::string identity_file;  // -i (or -o IdentityFile=); empty when not named
  std::string known_hosts;    // -o UserKnownHostsFile=; empty when not named
  std::string config_file;    // -F, only when SshLineRules::allow_config_file
  std::vector<std::pair<std::string, std::string>> options;  // every -o, in order
};

struct SshLineRules {
  // `isoharness check` also takes the line `isoharness local up` prints, which names its
  // ssh config with -F. The hawk backend never allows it.
  bool allow_config_file = false;
  // For a jumphost or sandbox named without a user (and, for the sandbox, no -l or
  // -o User): these (the hawk backend passes its profile's hawk.jumphost_user /
  // hawk.sandbox_user), else local_user.
  std::string jump_user;
  std::string sandbox_user;
  std::string local_user;  // the user running isoharness (local_user_name())
  // Where the caller's default users are set (e.g. "hawk.jumphost_user"), named when a host
  // has no user at all; empty: the caller has no such setting, and none is named.
  std::string jump_user_setting;
  std::string sandbox_user_setting;
};

// `output` may hold several lines; the first that starts with "ssh " (after blanks) is
// used. Errors name the offending word.
Expected<SshLine> parse_ssh_line(std::string_view output, const SshLineRules& rules = {});

// The name of the user this process runs as, from the password database ("" if none).
std::string local_user_name();

// "~/x" -> "$HOME/x"; anything else unchanged.
std::string expand_home(const std::string& path);

}  // namespace isoharness::transport
