// One way to make an SSH key pair: ssh-keygen, ed25519, no passphrase.
#pragma once

#include <chrono>
#include <string>

#include "harness/common/expected.h"

namespace isoharness {

// Writes `private_path` (0600) and `private_path`.pub with `comment`, and returns the public
// key line (without its newline). An error names ssh-keygen's complaint and the package
// that provides it.
Expected<std::string> generate_ed25519_key(const std::string& private_path, const std::string& comment,
                                           std::chrono::milliseconds deadline = std::chrono::seconds(20));

}  // namespace isoharness
