// A small real network for transport tests and the transport benchmark: a jumphost
// namespace reachable from the host over a veth, running OpenSSH sshd on port 22
// (keys only, no shell, forwarding only to the sandbox's port 2222), and a sandbox namespace reachable only
// from the jumphost, running sshd on port 2222 with an sftp subsystem. Addresses are two /30s of
// 198.51.100.0/24 that nothing on the host uses; every name carries a random run id.
// Everything (sshd processes, agent, namespaces and their veths, the temp dir) is removed
// by the destructor, also when setup fails half-way.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "harness/transport/ssh_route.h"
#include "harness/transport/transport.h"

namespace isoharness::test {

class TransportWorld {
 public:
  // What the sandbox's sshd offers. sftp false: no `Subsystem sftp` line (as dropbear or a
  // minimal sshd). head false: its sessions' PATH is a directory of links to every command
  // of /usr/bin and /usr/sbin but `head` (a sandbox image without it), HOME an empty one.
  // jump_sftp: the jumphost's sshd serves SFTP and nothing else (ForceCommand
  // internal-sftp) instead of no session at all, as an operator's log server would.
  struct Options {
    bool sftp = true;
    bool head = true;
    bool jump_sftp = false;
  };
  // Builds the world; throws std::runtime_error saying which step failed.
  static std::unique_ptr<TransportWorld> create(Options options);
  static std::unique_ptr<TransportWorld> create() { return create(Options{}); }
  ~TransportWorld();
  TransportWorld(const TransportWorld&) = delete;
  TransportWorld& operator=(const TransportWorld&) = delete;

  std::string run_id;
  std::string dir;  // temp dir with keys, configs, logs and `remote/` for uploads
  std::string ns_jump, ns_sandbox;
  transport::SshRoute route;  // both host keys pinned; user root
  transport::Credentials credentials;
  std::string client_public_key;  // the key servers accept
  std::string stranger_key;       // a host key line no server has (for "changed" tests)
  std::string openssh_config;     // ssh -F file for the same route with OpenSSH

  // Starts an ssh-agent holding the client key; returns its socket path.
  std::string start_agent();
  // Drops (or stops dropping) every packet arriving in the jumphost namespace, with an
  // nftables table there: connections stall, nothing closes, and no route changes (taking
  // the veth down instead would send the host's packets to its default gateway).
  void set_jump_stalled(bool stalled);
  // Kills the jumphost sshd's per-connection processes (not its listener): every
  // connection to the jumphost drops at once.
  void kill_jump_connections();
  // OpenSSH argv that runs `command` on the sandbox through the jumphost (ssh -J).
  std::vector<std::string> openssh_argv(const std::vector<std::string>& command) const;

 private:
  TransportWorld() = default;
  // The world's four addresses: host and jumphost on one /30, jumphost and sandbox on another.
  struct Addresses {
    std::string host, jump, jump_inner, sandbox;
  };
  void build();
  void make_keys();
  void link_namespaces(const Addresses& a);
  std::string sandbox_role() const;
  pid_t start_sshd(const std::string& ns, const std::string& address, int port, const std::string& host_key);

  std::string veth_host_;
  std::string jump_role_;  // sshd_config lines only the jumphost has
  Options options_;        // what the sandbox's sshd offers
  std::vector<pid_t> pids_;
  pid_t jump_sshd_ = 0;
  std::vector<std::string> namespaces_;
};

}  // namespace isoharness::test
