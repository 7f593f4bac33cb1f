#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "harness/transport/jump_pump.h"
#include "harness/transport/sandbox_impl.h"
#include "harness/transport/transport.h"

namespace isoharness::transport {
namespace {

constexpr std::size_t kMaxKnownHosts = 1 << 20;

Expected<std::string> read_known_hosts(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(fmt::format("cannot read known_hosts file {}", path));
  std::string text(kMaxKnownHosts + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxKnownHosts)
    return make_error(fmt::format("known_hosts file {} is larger than 1 MiB", path));
  return text;
}

Deadline deadline_from(std::chrono::milliseconds d) {
  return Clock::now() + d;
}

}  // namespace

JumpConnection::JumpConnection(std::unique_ptr<JumpPump> pump, Credentials credentials, HostKeyPolicy policy)
    : pump_(std::move(pump)), credentials_(std::move(credentials)), policy_(std::move(policy)) {}

JumpConnection::~JumpConnection() = default;

Expected<std::unique_ptr<JumpConnection>> JumpConnection::connect(const SshEndpoint& jump,
                                                                  const Credentials& credentials,
                                                                  const HostKeyPolicy& policy,
                                                                  std::chrono::milliseconds deadline) {
  Deadline until = deadline_from(deadline);
  std::string what = fmt::format("jumphost {}@{}:{}", jump.user, jump.host, jump.port);
  if (jump.user.empty() || jump.host.empty()) return make_error(what + ": the route names no user or host");
  std::string known_hosts;
  if (!policy.known_hosts_path.empty()) {
    auto text = read_known_hosts(policy.known_hosts_path);
    if (!text) return text.error();
    known_hosts = std::move(*text);
  }
  auto fd = tcp_connect(jump.host, jump.port, until);
  if (!fd) return make_error(what + ": " + fd.error().message);
  std::optional<AcceptedKey> accepted;
  auto session = SshSession::establish(*fd, jump, known_hosts, policy.known_hosts_path, credentials, policy,
                                       until, what, &accepted);
  if (!session) return session.error();
  auto pump = std::make_unique<JumpPump>(std::move(*session));
  std::unique_ptr<JumpConnection> conn(new JumpConnection(std::move(pump), credentials, policy));
  if (accepted) conn->accepted_.push_back(std::move(*accepted));
  return conn;
}

Expected<std::unique_ptr<SandboxSession>> JumpConnection::open(const SshEndpoint& sandbox,
                                                               std::chrono::milliseconds deadline) {
  Deadline until = deadline_from(deadline);
  std::string what =
      fmt::format("sandbox {}@{}:{} (through the jumphost)", sandbox.user, sandbox.host, sandbox.port);
  if (sandbox.user.empty() || sandbox.host.empty())
    return make_error(what + ": the route names no user or host");
  auto fd = pump_->open_channel(sandbox.host, sandbox.port, until);
  if (!fd) return make_error(what + ": " + fd.error().message);
  // The jumphost's known_hosts file is not consulted for sandboxes: their addresses are
  // reused with fresh keys, so the backend's pin is the only truth.
  HostKeyPolicy inner{policy_.accept_new, ""};
  std::optional<AcceptedKey> accepted;
  auto session = SshSession::establish(*fd, sandbox, "", "", credentials_, inner, until, what, &accepted);
  if (!session) return session.error();
  if (accepted) {
    std::lock_guard lock(mutex_);
    accepted_.push_back(*accepted);
  }
  return std::make_unique<SandboxSession>(
      std::make_unique<SandboxSession::Impl>(std::move(*session), accepted));
}

std::vector<AcceptedKey> JumpConnection::accepted_keys() const {
  std::lock_guard lock(mutex_);
  return accepted_;
}

bool JumpConnection::alive() const {
  return pump_->alive();
}

}  // namespace isoharness::transport
