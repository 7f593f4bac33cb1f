// Fakes at the runner's two seams, so that run_job runs without root, sandboxes or SSH: a
// deploy::Backend that hands out (or refuses) sandboxes, and a SandboxReach whose channels
// answer as a scripted sandbox would (sandbox_channel.h). A FakeRun holds what a JobContext
// refers to.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/common/error.h"
#include "harness/deploy/backend.h"
#include "harness/runner/journal.h"
#include "harness/runner/run_state.h"
#include "harness/runner/sandbox_channel.h"
#include "harness/runner/sandbox_job.h"
#include "tests/support/test_support.h"

namespace isoharness::test {

// Deploys every request (handle named after it, with `facts`) unless its item id is in
// `failures`: "infra" throws an InfraError, "stop" a RunStoppingError. Counts deploys and
// destroys.
class FakeBackend : public deploy::Backend {
 public:
  explicit FakeBackend(std::map<std::string, std::string> failures = {},
                       nlohmann::json facts = nlohmann::json::object())
      : failures_(std::move(failures)), facts_(std::move(facts)) {}
  std::string name() const override { return "fake"; }
  deploy::SandboxHandle deploy(const deploy::SandboxRequest& request) override {
    std::lock_guard lock(mu_);
    deployed.push_back(request.item_id);
    requests.push_back(request);
    auto it = failures_.find(request.item_id);
    if (it != failures_.end() && it->second == "stop") throw RunStoppingError("the jumphost is gone");
    if (it != failures_.end())
      throw InfraError("the platform did not start the eval (3 tries): Error: 503 Service Unavailable");
    deploy::SandboxHandle h;
    h.name = request.name;
    h.route.jump = {"192.0.2.1", 22, "jump", "ssh-ed25519 AAAAjump"};
    h.route.sandbox = {"192.0.2.10", 2222, "agent", "ssh-ed25519 AAAAsandbox"};
    h.facts = deploy::SandboxFacts::from_json(facts_);
    return h;
  }
  void destroy(const deploy::SandboxHandle&) noexcept override { ++destroyed; }
  std::vector<deploy::EgressTarget> egress_targets() const override { return {}; }
  nlohmann::json context() const override { return nlohmann::json::object(); }

  std::vector<std::string> deployed;
  std::vector<deploy::SandboxRequest> requests;
  std::atomic<int> destroyed{0};

 private:
  std::map<std::string, std::string> failures_;
  nlohmann::json facts_;
  std::mutex mu_;
};

// What the scripted sandbox answers to each kind of command; each may be replaced.
struct FakeSandbox {
  std::size_t agent_bytes = 123456;
  std::string agent_sha256 = std::string(64, 'a');
  // The agent's answer to `isoprobe posture` (argv[0] is the remote agent).
  std::function<Expected<transport::ExecResult>(const std::vector<std::string>& argv)> posture;
  // Every other command: the freshness checks and the markers (framed answers).
  std::function<Expected<transport::ExecResult>(const std::vector<std::string>& argv)> shell;
  std::vector<std::vector<std::string>> commands;  // every argv executed, in order
};

// The framed answer attempt_freshness.cc's scripts expect of a clean, working sandbox:
// argv is {"sh", "-c", script, "isoharness", boundary, args...}.
inline Expected<transport::ExecResult> clean_shell(const std::vector<std::string>& argv) {
  transport::ExecResult r;
  r.exit_code = 0;
  if (argv.size() < 5) return r;
  const std::string& b = argv[4];
  const bool marks = argv[2].find("setsid") != std::string::npos;
  r.out = marks ? "\n" + b + " file 0\n\n" + b + " start 0\n" + b + " running 0\n"
                : "\n" + b + " marker 1\n\n" + b + " pgrep 1\n";
  return r;
}

class FakeChannel : public runner::SandboxChannel {
 public:
  explicit FakeChannel(FakeSandbox& box) : box_(box) {}
  Expected<transport::ExecResult> exec(const std::vector<std::string>& argv, std::chrono::milliseconds,
                                       std::size_t) override {
    box_.commands.push_back(argv);
    if (!argv.empty() && argv[0] == ".isoprobe/isoprobe") return box_.posture(argv);
    return box_.shell ? box_.shell(argv) : clean_shell(argv);
  }
  Expected<transport::UploadedFile> upload(const std::string&, const std::string& remote_path, int,
                                           std::chrono::milliseconds) override {
    return transport::UploadedFile{remote_path, 10, "", transport::UploadCheck::read_back,
                                   transport::UploadVia::sftp};
  }
  Expected<std::vector<transport::UploadedFile>> upload_dir(const std::string&, const std::string& remote_dir,
                                                            std::chrono::milliseconds,
                                                            transport::UploadCheck check) override {
    return std::vector<transport::UploadedFile>{
        {remote_dir + "/isoprobe", box_.agent_bytes, box_.agent_sha256, check, transport::UploadVia::exec}};
  }

 private:
  FakeSandbox& box_;
};

// Opens a FakeChannel on `box` (or throws `open_throws`, as a lost jumphost does); `lost`
// is what the jump connection's health reads.
class FakeReach : public runner::SandboxReach {
 public:
  explicit FakeReach(FakeSandbox& box) : box_(box) {}
  Expected<std::unique_ptr<runner::SandboxChannel>> open(const transport::SshRoute&,
                                                         std::chrono::milliseconds) override {
    ++opened;
    if (open_throws) open_throws();
    return std::unique_ptr<runner::SandboxChannel>(std::make_unique<FakeChannel>(box_));
  }
  bool lost(const transport::SshEndpoint&) override { return jump_lost; }

  std::function<void()> open_throws;
  bool jump_lost = false;
  int opened = 0;

 private:
  FakeSandbox& box_;
};

// The settings, state, journal and reach one fake run's jobs refer to; ctx(backend) makes
// the JobContext, with every record also kept in `records`.
struct FakeRun {
  explicit FakeRun(const std::atomic<bool>* interrupted = nullptr)
      : state(interrupted),
        journal(dir.str(), {{"schema", "isoharness.result/v1"}, {"skipped", nlohmann::json::array()}}) {
    settings.run_id = "t1";
    settings.witness_waived = true;    // the fake backend has no witness and says so (witness: none)
    settings.node_view_waived = true;  // nor a view of its node (node_view: none)
  }
  runner::JobContext ctx(deploy::Backend& backend) {
    runner::JobContext c{settings, backend, journal, reach, state};
    c.on_sandbox = [this](const nlohmann::json& r) { records.push_back(r); };
    return c;
  }

  TempDir dir{"ih-runner"};
  runner::RunSettings settings;
  runner::RunState state;
  runner::Journal journal;
  FakeSandbox box;
  FakeReach reach{box};
  std::vector<nlohmann::json> records;
};

}  // namespace isoharness::test
