// Shared by the local backend's system tests: a scratch directory, a login key, running
// OpenSSH's own client through the jumphost, and a search for leftovers of a run.
#pragma once

#include <string>
#include <vector>

#include "harness/common/subprocess.h"
#include "harness/deploy/backend.h"

namespace isoharness::test::local {

// A temporary directory removed with everything in it when the object goes.
struct ScratchDir {
  ScratchDir();
  ~ScratchDir();
  std::string path;
};

// An ed25519 key pair in dir: returns the public key line; private key at dir/id_ed25519.
std::string make_login_key(const std::string& dir);

// Runs `ssh -F <cfg> -J jump sandbox -p 2222 -- command...` with known_hosts holding the
// route's pinned keys. `tag` keeps the files of different sandboxes apart.
RunResult ssh_through_jumphost(const std::string& dir, const std::string& tag,
                               const transport::SshRoute& route, const std::vector<std::string>& command,
                               int deadline_s = 60);

// Everything of a run still on this machine: netns, links, containers' processes, the
// state directory, nft tables in surviving namespaces, cgroups. Empty = nothing left.
std::vector<std::string> leftovers_of(const std::string& state_root, const std::string& run_id);

// bytes as a printf format made only of \xHH escapes (nothing for a shell or printf to read).
std::string printf_escaped(const std::string& bytes);

// The text of a shell function for a sandbox's bash: `probe ADDR/PORT PAYLOAD MARKER`
// connects with /dev/tcp (5 s in all), sends PAYLOAD (a printf format), reads the answer's
// lines and prints one word: `open` when a line holds MARKER (empty MARKER: any byte),
// `answered-otherwise` when the far side answered something else (its lines go to stderr),
// `closed` when nothing answered. A connect alone never reads open: under runsc's host
// network stack (ptrace platform) a blocking connect to a dropped address returns success,
// its SYN unanswered, whenever other connections of the sandbox close at the same moment
// (19 and 20 of 40 tries on 2026-12-07, runc 0 of 40); such a connect is named on stderr.
std::string answer_probe_function();

// The world helper built next to the tests' library.
std::string helper_path();

}  // namespace isoharness::test::local
