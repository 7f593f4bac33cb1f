#include "harness/deploy/local/sshd_config.h"

namespace isoharness::deploy::local {
namespace {

const char* kCommon =
    "HostKey /etc/ssh/ssh_host_ed25519_key\n"
    "PidFile none\n"
    "UsePAM no\n"
    "StrictModes no\n"
    "PermitRootLogin no\n"
    "PasswordAuthentication no\n"
    "KbdInteractiveAuthentication no\n"
    "PubkeyAuthentication yes\n"
    "AuthorizedKeysFile /etc/ssh/authorized_keys\n"
    "X11Forwarding no\n"
    "AllowAgentForwarding no\n"
    "AllowStreamLocalForwarding no\n"
    "PermitTunnel no\n"
    "GatewayPorts no\n"
    "PermitUserEnvironment no\n"
    "PrintMotd no\n"
    "LogLevel INFO\n"
    "MaxStartups 64:30:128\n"
    "LoginGraceTime 30\n";

}  // namespace

std::string sandbox_sshd_config(const std::string& user, int port, bool sftp) {
  return "# isoharness sandbox sshd (runs as " + user + ")\n" + "Port " + std::to_string(port) +
         "\nListenAddress 0.0.0.0\nListenAddress ::\n" + kCommon + "AllowUsers " + user +
         "\nAllowTcpForwarding no\nPermitTTY yes\n" + (sftp ? "Subsystem sftp internal-sftp\n" : "");
}

std::string jumphost_sshd_config(const std::string& user, const std::string& listen_address,
                                 const std::vector<std::string>& permit_open) {
  std::string out = "# isoharness jumphost sshd: forwarding to sandboxes' port 2222 only\n";
  out += "Port 22\nListenAddress " + listen_address + "\n" + kCommon;
  out += "AllowUsers " + user + "\nPermitTTY no\nForceCommand /bin/false\nAllowTcpForwarding local\n";
  out += "PermitOpen";
  for (const auto& d : permit_open) out += " " + d;
  if (permit_open.empty()) out += " none";
  out += "\n";
  return out;
}

}  // namespace isoharness::deploy::local
