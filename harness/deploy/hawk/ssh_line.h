// The route out of what `hawk human eval ssh-command` prints. Its layout is not documented,
// so the contract is narrow on purpose: find the line that starts with `ssh `, accept
// `-J [user@]host[:port]`, `-p PORT`, `-i FILE`, `-o KEY=VALUE` (also `-oKEY=VALUE`),
// `-l USER` and one `[user@]host`, in any order, and refuse anything else by name.
// Text only, no I/O.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/common/expected.h"
#include "harness/deploy/backend.h"

namespace isoharness::deploy::hawk {

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
};

// `output` may hold several lines; the first that starts with "ssh " (after blanks) is
// used. Errors name the offending word.
Expected<SshLine> parse_ssh_line(std::string_view output, const SshLineRules& rules = {});

// "~/x" -> "$HOME/x"; anything else unchanged.
std::string expand_home(const std::string& path);

}  // namespace isoharness::deploy::hawk
