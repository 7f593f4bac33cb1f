// Where an SSH connection goes: one endpoint with the host key to pin, and the two-hop route
// a human baseliner takes (`ssh -J`): the jumphost, then the sandbox behind it. Backends
// hand these out (deploy::SandboxHandle::route); the transport connects along them.
#pragma once

#include <string>

namespace isoharness::transport {

// One SSH endpoint with the host key the caller must pin.
struct SshEndpoint {
  std::string host;  // address or name, as seen from the previous hop
  int port = 22;
  std::string user;
  std::string host_key;  // OpenSSH public key line: "ssh-ed25519 AAAA..." (type + base64)
};

// The path a human baseliner uses: the jumphost, then the sandbox's port 2222.
struct SshRoute {
  SshEndpoint jump;
  SshEndpoint sandbox;
};

}  // namespace isoharness::transport
