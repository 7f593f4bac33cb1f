// The run's jump connections, one per jumphost endpoint for the whole run (under hawk every
// sandbox's ssh line names the platform's shared jumphost, so every sandbox goes through one
// pinned connection; the local backend's world has one jumphost too): opened on first use,
// reopened when they die, each thread-safe itself. It
// is how the jobs reach their sandboxes over SSH (SandboxReach), and it keeps every host
// key accepted on first use for the result.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "harness/runner/sandbox_channel.h"
#include "harness/transport/transport.h"

namespace isoharness::runner {

class JumpPool : public SandboxReach {
 public:
  // must_be_pinned: a jumphost with no pinned key is refused (RunSettings). interrupted:
  // stops the retries of a refused connection (the signal flag, or none).
  JumpPool(transport::Credentials credentials, transport::HostKeyPolicy policy, bool must_be_pinned,
           const std::atomic<bool>* interrupted);
  ~JumpPool() override;
  JumpPool(const JumpPool&) = delete;
  JumpPool& operator=(const JumpPool&) = delete;

  // The jump connection for this endpoint (opened or reopened as needed). Throws
  // InfraError when it cannot be reached (RunStoppingError when no other jumphost answers
  // either) or its key is not pinned where it must be.
  transport::JumpConnection& jump_for(const transport::SshEndpoint& jump);
  // Closes every connection; every key accepted on first use stays in accepted_keys().
  void close();
  std::vector<transport::AcceptedKey> accepted_keys() const;
  // How many jump connections have been opened so far (reopened ones included).
  std::size_t connections_opened() const;

  Expected<std::unique_ptr<SandboxChannel>> open(const transport::SshRoute& route,
                                                 std::chrono::milliseconds deadline) override;
  bool lost(const transport::SshEndpoint& jump) override;

 private:
  const transport::Credentials credentials_;
  const transport::HostKeyPolicy policy_;
  const bool must_be_pinned_;
  const std::atomic<bool>* interrupted_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<transport::JumpConnection>> jumps_;  // by user@host:port
  std::vector<transport::AcceptedKey> accepted_;  // from connections closed or replaced
  std::size_t opened_ = 0;
};

}  // namespace isoharness::runner
