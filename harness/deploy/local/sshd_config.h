// The two OpenSSH server configurations of the local world, rendered as text.
#pragma once

#include <string>
#include <vector>

namespace isoharness::deploy::local {

// The sandbox's sshd: runs as the sandbox's user on port 2222, key logins as `user` only,
// no PAM, no pid file, sftp served in-process (images may lack sftp-server); with sftp
// false no SFTP subsystem at all (the test weakening sshd:no-sftp).
std::string sandbox_sshd_config(const std::string& user, int port = 2222, bool sftp = true);

// The jumphost's sshd: keys only, no shell, no TTY, forwarding only to the listed
// destinations ("addr:port"), listening on one address.
std::string jumphost_sshd_config(const std::string& user, const std::string& listen_address,
                                 const std::vector<std::string>& permit_open);

}  // namespace isoharness::deploy::local
