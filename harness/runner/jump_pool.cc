#include "harness/runner/jump_pool.h"

#include <thread>

#include "harness/common/error.h"

namespace isoharness::runner {
namespace {

using namespace std::chrono_literals;

// A jumphost that refuses a connection is tried this many more times, this far apart,
// before the run counts it as lost.
constexpr int kJumpRetries = 2;
constexpr auto kJumpRetryPause = 2s;

std::string endpoint_key(const transport::SshEndpoint& e) {
  return e.user + "@" + e.host + ":" + std::to_string(e.port);
}

// A transport::SandboxSession as a SandboxChannel.
class SshChannel : public SandboxChannel {
 public:
  explicit SshChannel(std::unique_ptr<transport::SandboxSession> session) : session_(std::move(session)) {}
  Expected<transport::ExecResult> exec(const std::vector<std::string>& argv,
                                       std::chrono::milliseconds deadline, std::size_t max_output) override {
    return session_->exec(argv, deadline, max_output);
  }
  Expected<transport::UploadedFile> upload(const std::string& local_path, const std::string& remote_path,
                                           int mode, std::chrono::milliseconds deadline) override {
    return session_->upload(local_path, remote_path, mode, deadline);
  }
  Expected<std::vector<transport::UploadedFile>> upload_dir(const std::string& local_dir,
                                                            const std::string& remote_dir,
                                                            std::chrono::milliseconds deadline,
                                                            transport::UploadCheck check) override {
    return session_->upload_dir(local_dir, remote_dir, deadline, check);
  }

 private:
  std::unique_ptr<transport::SandboxSession> session_;
};

}  // namespace

JumpPool::JumpPool(transport::Credentials credentials, transport::HostKeyPolicy policy, bool must_be_pinned,
                   const std::atomic<bool>* interrupted)
    : credentials_(std::move(credentials)),
      policy_(std::move(policy)),
      must_be_pinned_(must_be_pinned),
      interrupted_(interrupted) {}

JumpPool::~JumpPool() {
  close();
}

transport::JumpConnection& JumpPool::jump_for(const transport::SshEndpoint& jump) {
  std::lock_guard lock(mutex_);
  auto& conn = jumps_[endpoint_key(jump)];
  if (conn && conn->alive()) return *conn;
  if (conn) {  // dead: keep what it accepted, then reconnect
    for (auto& k : conn->accepted_keys()) accepted_.push_back(std::move(k));
    conn.reset();
  }
  if (must_be_pinned_ && jump.host_key.empty() && policy_.known_hosts_path.empty())
    throw RunStoppingError(
        "the jumphost " + endpoint_key(jump) +
        " has no pinned key: sandbox keys are accepted on first use only through a pinned jumphost "
        "(set hawk.jumphost_host_key, or pass --accept-new-host-keys)");
  auto opened = transport::JumpConnection::connect(jump, credentials_, policy_, 20s);
  for (int again = 0; !opened && again < kJumpRetries && !(interrupted_ && interrupted_->load()); ++again) {
    std::this_thread::sleep_for(kJumpRetryPause);  // one refused connection is not yet a lost jumphost
    opened = transport::JumpConnection::connect(jump, credentials_, policy_, 20s);
  }
  if (!opened) {
    const std::string what = "cannot reach the jumphost " + jump.host + ":" + std::to_string(jump.port) +
                             " (" + std::to_string(kJumpRetries + 1) + " tries): " + opened.error().message;
    // The harness's own path: with no other jumphost answering, no later sandbox can be reached.
    bool another_alive = false;
    for (const auto& [key, other] : jumps_) another_alive |= other && other->alive();
    if (another_alive) throw InfraError(what);
    throw RunStoppingError(what);
  }
  conn = std::move(opened.value());
  ++opened_;
  return *conn;
}

void JumpPool::close() {
  std::lock_guard lock(mutex_);
  for (auto& [key, conn] : jumps_)
    if (conn)
      for (auto& k : conn->accepted_keys()) accepted_.push_back(std::move(k));
  jumps_.clear();
}

std::vector<transport::AcceptedKey> JumpPool::accepted_keys() const {
  std::lock_guard lock(mutex_);
  std::vector<transport::AcceptedKey> keys = accepted_;
  for (const auto& [key, conn] : jumps_)
    if (conn)
      for (auto& k : conn->accepted_keys()) keys.push_back(std::move(k));
  return keys;
}

std::size_t JumpPool::connections_opened() const {
  std::lock_guard lock(mutex_);
  return opened_;
}

Expected<std::unique_ptr<SandboxChannel>> JumpPool::open(const transport::SshRoute& route,
                                                         std::chrono::milliseconds deadline) {
  auto session = jump_for(route.jump).open(route.sandbox, deadline);
  if (!session) return session.error();
  return std::unique_ptr<SandboxChannel>(std::make_unique<SshChannel>(std::move(session.value())));
}

bool JumpPool::lost(const transport::SshEndpoint& jump) {
  std::lock_guard lock(mutex_);
  auto it = jumps_.find(endpoint_key(jump));
  return it == jumps_.end() || !it->second || !it->second->alive();
}

}  // namespace isoharness::runner
