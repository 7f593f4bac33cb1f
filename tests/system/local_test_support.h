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

// The world helper built next to the tests' library.
std::string helper_path();

}  // namespace isoharness::test::local
