// A deployed sandbox with an open SSH session through the jumphost and isoprobe uploaded:
// what both `run` (posture) and `parity` (timing) work on. Destroying it destroys the
// sandbox, whatever happened before.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "harness/deploy/backend.h"
#include "harness/runner/sandbox_channel.h"
#include "harness/runner/sandbox_job.h"
#include "harness/transport/transport.h"

namespace isoharness::runner {

// Remote paths, relative to the sandbox user's login directory.
inline constexpr const char* kRemoteProbeDir = ".isoprobe";
inline constexpr const char* kRemoteProbe = ".isoprobe/isoprobe";

class LiveSandbox {
 public:
  // Deploys the request on ctx's backend; throws InfraError (nothing left behind) when it
  // cannot. Keeps what it needs of ctx (the backend, reach, run state: owned by the session).
  LiveSandbox(const JobContext& ctx, const deploy::SandboxRequest& request);
  ~LiveSandbox();
  LiveSandbox(const LiveSandbox&) = delete;
  LiveSandbox& operator=(const LiveSandbox&) = delete;

  // Opens the SSH session through the jumphost, retrying while sshd starts (throws
  // InfraError at the deadline or on a refused host key).
  SandboxChannel& connect(std::chrono::milliseconds deadline);
  // Uploads the isoprobe bundle, checked as `check` says (transport::UploadCheck); returns
  // bytes sent. Under UploadCheck::size the caller verifies the agent's content itself
  // (uploaded_agent(): what was sent to kRemoteProbe, with its SHA-256).
  std::size_t upload_isoprobe(transport::UploadCheck check = transport::UploadCheck::read_back);
  const std::optional<transport::UploadedFile>& uploaded_agent() const { return agent_; }

  SandboxChannel& session();
  const deploy::SandboxHandle& handle() const { return *handle_; }
  nlohmann::json& timings() { return timings_; }

 private:
  deploy::Backend& backend_;
  SandboxReach& reach_;
  RunState& state_;
  std::string bundle_;  // the isoprobe bundle to upload
  std::optional<deploy::SandboxHandle> handle_;
  std::unique_ptr<SandboxChannel> session_;
  std::optional<transport::UploadedFile> agent_;
  nlohmann::json timings_ = nlohmann::json::object();
};

// Seconds from t to now (the timings of a sandbox's record).
double seconds_since(std::chrono::steady_clock::time_point t);

}  // namespace isoharness::runner
