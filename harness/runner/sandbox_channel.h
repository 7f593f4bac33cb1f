// The seam between a job and the transport: what a job needs from a sandbox it has reached
// (SandboxChannel) and how it reaches one (SandboxReach). The real ones are SSH through the
// jumphost (jump_pool.h); unit tests drive run_job with fakes (tests/unit/runner_job_test.cpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "harness/common/expected.h"
#include "harness/transport/ssh_route.h"
#include "harness/transport/transport.h"

namespace isoharness::runner {

// An open session to one sandbox. Same meaning as transport::SandboxSession's calls of the
// same names: every call has a deadline, every read a cap; an error means the command
// could not run or the connection failed.
class SandboxChannel {
 public:
  virtual ~SandboxChannel() = default;
  virtual Expected<transport::ExecResult> exec(const std::vector<std::string>& argv,
                                               std::chrono::milliseconds deadline,
                                               std::size_t max_output) = 0;
  virtual Expected<transport::UploadedFile> upload(const std::string& local_path,
                                                   const std::string& remote_path, int mode,
                                                   std::chrono::milliseconds deadline) = 0;
  virtual Expected<std::vector<transport::UploadedFile>> upload_dir(const std::string& local_dir,
                                                                    const std::string& remote_dir,
                                                                    std::chrono::milliseconds deadline,
                                                                    transport::UploadCheck check) = 0;
};

// How the jobs of a run reach their sandboxes.
class SandboxReach {
 public:
  virtual ~SandboxReach() = default;
  // A session to route.sandbox through route.jump; an error when this try failed (the
  // sandbox's sshd may still be starting). Throws InfraError or RunStoppingError when the
  // jumphost itself cannot be reached.
  virtual Expected<std::unique_ptr<SandboxChannel>> open(const transport::SshRoute& route,
                                                         std::chrono::milliseconds deadline) = 0;
  // Whether the harness's own path to this jumphost has died (not the sandbox's doing).
  virtual bool lost(const transport::SshEndpoint& jump) = 0;
};

}  // namespace isoharness::runner
