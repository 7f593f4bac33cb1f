#include "harness/runner/live_sandbox.h"

#include <thread>

#include "harness/common/error.h"

namespace isoharness::runner {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

}  // namespace

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

LiveSandbox::LiveSandbox(const JobContext& ctx, const deploy::SandboxRequest& request)
    : backend_(ctx.backend), reach_(ctx.reach), state_(ctx.state), bundle_(ctx.settings.isoprobe_bundle) {
  // Held from the start request on: on a platform the eval counts against the user's live
  // evals while it is being scheduled and pulled, which is most of its life.
  const double waited = state_.enter_held();
  if (waited >= 0.001) timings_["live_slot_wait_s"] = waited;
  auto t = Clock::now();
  try {
    handle_ = backend_.deploy(request);
  } catch (...) {
    state_.leave_held();
    throw;
  }
  timings_["deploy_s"] = seconds_since(t);
}

LiveSandbox::~LiveSandbox() {
  session_.reset();
  if (!handle_) return;
  backend_.destroy(*handle_);
  state_.leave_held();  // only now: until its destroy returned, the platform counts it
}

SandboxChannel& LiveSandbox::connect(std::chrono::milliseconds deadline) {
  auto t = Clock::now();
  const auto until = t + deadline;
  const auto& route = handle_->route;
  std::string last;
  while (Clock::now() < until) {
    if (state_.interrupted()) throw InfraError("interrupted");
    auto s = reach_.open(route, 10s);
    if (s) {
      session_ = std::move(s.value());
      timings_["ssh_ready_s"] = seconds_since(t);
      return *session_;
    }
    last = s.error().message;
    // A refused host key is final; anything else may be sshd still starting.
    if (last.find("host key") != std::string::npos) break;
    std::this_thread::sleep_for(300ms);
  }
  throw InfraError("cannot open an SSH session to sandbox " + route.sandbox.host + ":" +
                   std::to_string(route.sandbox.port) + " through the jumphost: " + last);
}

SandboxChannel& LiveSandbox::session() {
  ISOHARNESS_CHECK(session_ != nullptr);
  return *session_;
}

std::size_t LiveSandbox::upload_isoprobe(transport::UploadCheck check) {
  auto t = Clock::now();
  auto uploaded = session().upload_dir(bundle_, kRemoteProbeDir, 60s, check);
  if (!uploaded) throw InfraError("uploading isoprobe failed: " + uploaded.error().message);
  std::size_t bytes = 0;
  for (const auto& f : uploaded.value()) {
    bytes += f.bytes;
    if (f.remote_path == kRemoteProbe) agent_ = f;
  }
  timings_["upload_s"] = seconds_since(t);
  return bytes;
}

}  // namespace isoharness::runner
