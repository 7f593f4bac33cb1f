// Files an OpenSSH client needs to reach a sandbox with the pinned keys: a known_hosts
// holding the jumphost's and the sandbox's host keys, and a config that makes `ssh -J`
// use them on both hops (options given with -o are not passed to the jump connection;
// a file given with -F is).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "harness/deploy/backend.h"

namespace isoharness::deploy::local {

// "host key" lines, "[addr]:port" form where the port is not 22.
std::string known_hosts_lines(const SshRoute& route);

// Host * block: the known_hosts file, strict checking, batch mode, the identity file.
std::string ssh_client_config(const std::string& known_hosts_path, const std::string& identity_file);

// argv of `ssh -F config -J jump sandbox -p 2222 [-- 'quoted command']`.
std::vector<std::string> ssh_argv(const SshRoute& route, const std::string& config_path,
                                  const std::vector<std::string>& command = {});

// A deployment profile file (YAML or JSON) as JSON. Throws UserError naming the file.
nlohmann::json load_profile_file(const std::string& path);

}  // namespace isoharness::deploy::local
