#include "harness/runner/sandbox_job.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "harness/common/error.h"

namespace isoharness::runner {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr const char* kRemoteProbeDir = ".isoprobe";        // relative to the login directory
constexpr const char* kMarkerName = ".isoharness-attempt";  // written after each attempt

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string target_flag(const deploy::EgressTarget& t) {
  return t.name + "=" + t.host + ":" + std::to_string(t.port) + "/" + t.proto;
}

// The jump connection, (re)opened under the context's lock.
transport::JumpConnection& jump_for(JobContext& ctx, const deploy::SshEndpoint& jump) {
  std::lock_guard lock(ctx.jump_mutex);
  if (!ctx.jump || !ctx.jump->alive()) {
    auto conn = transport::JumpConnection::connect(jump, ctx.credentials, ctx.host_key_policy, 20s);
    if (!conn) throw InfraError("cannot reach the jumphost " + jump.host + ":" + std::to_string(jump.port) + ": " +
                                conn.error().message);
    ctx.jump = std::move(conn.value());
  }
  return *ctx.jump;
}

// sshd in a fresh sandbox takes a moment: retry opening until the deadline.
std::unique_ptr<transport::SandboxSession> open_session(JobContext& ctx, const deploy::SshRoute& route,
                                                        std::chrono::milliseconds deadline) {
  const auto until = Clock::now() + deadline;
  std::string last;
  while (Clock::now() < until) {
    if (ctx.interrupted && ctx.interrupted->load()) throw InfraError("interrupted");
    auto& jump = jump_for(ctx, route.jump);
    auto s = jump.open(route.sandbox, 10s);
    if (s) return std::move(s.value());
    last = s.error().message;
    // A refused host key is final; anything else may be sshd still starting.
    if (last.find("host key") != std::string::npos) break;
    std::this_thread::sleep_for(300ms);
  }
  throw InfraError("cannot open an SSH session to sandbox " + route.sandbox.host + ":" +
                   std::to_string(route.sandbox.port) + " through the jumphost: " + last);
}

nlohmann::json base_record(const Job& job, int attempt, const std::string& name) {
  const auto& item = job.item;
  return {{"id", name},
          {"scenario", job.scenario},
          {"item_id", item.value("id", "")},
          {"task", item.value("task", "")},
          {"item", item.value("item", "")},
          {"level", item.value("level", "")},
          {"runtime", job.runtime},
          {"node_class", job.node_class},
          {"attempt", attempt},
          {"facts", nlohmann::json::object()},
          {"timings", nlohmann::json::object()},
          {"posture", nullptr},
          {"checks", nlohmann::json::array()},
          {"error", nullptr}};
}

void probe_sandbox(const Job& job, int attempt, JobContext& ctx, const deploy::SandboxHandle& handle,
                   nlohmann::json& record) {
  auto t = Clock::now();
  auto session = open_session(ctx, handle.route, 45s);
  record["timings"]["ssh_ready_s"] = seconds_since(t);

  // Freshness: a marker written in an earlier attempt must not be here.
  auto marker = session->exec({"cat", kMarkerName}, 20s, 4096);
  if (!marker) throw InfraError("exec in sandbox failed: " + marker.error().message);
  bool stale = marker->exit_code == 0;
  record["checks"].push_back(verify::to_json(verify::CheckResult{
      "fresh_sandbox", stale ? "fail" : "pass", "no file from an earlier attempt",
      stale ? "found " + std::string(kMarkerName) + ": " + marker->out.substr(0, 200) : "clean home directory",
      stale ? "fresh_sandbox: a file written by an earlier attempt is still present — the sandbox (or its disk) was reused"
            : (attempt > 1 ? "the marker written by attempt " + std::to_string(attempt - 1) + " is absent"
                           : "first attempt: nothing from earlier runs"),
      ""}));

  t = Clock::now();
  auto uploaded = session->upload_dir(ctx.isoprobe_bundle, kRemoteProbeDir, 60s);
  if (!uploaded) throw InfraError("uploading isoprobe failed: " + uploaded.error().message);
  std::size_t bytes = 0;
  for (const auto& f : uploaded.value()) bytes += f.bytes;
  record["timings"]["upload_s"] = seconds_since(t);
  record["facts"]["isoprobe_upload_bytes"] = bytes;

  std::vector<std::string> argv = {std::string(kRemoteProbeDir) + "/isoprobe", "posture", "--deadline-ms",
                                   std::to_string(std::max<long>(5000, ctx.posture_deadline.count() / 3))};
  for (const auto& target : ctx.targets) {
    argv.push_back("--target");
    argv.push_back(target_flag(target));
  }
  t = Clock::now();
  auto result = session->exec(argv, ctx.posture_deadline, 8 << 20);
  record["timings"]["posture_s"] = seconds_since(t);
  if (!result) throw InfraError("running isoprobe failed: " + result.error().message);
  if (result->timed_out) throw InfraError("isoprobe posture passed its deadline");
  auto posture = nlohmann::json::parse(result->out, nullptr, false);
  if (posture.is_discarded() || !posture.is_object()) {
    std::string err = result->err.substr(0, 500);
    throw InfraError("isoprobe printed no posture document (exit " + std::to_string(result->exit_code) + "): " + err);
  }
  record["posture"] = posture;

  auto checks = verify::verify_sandbox(
      {job.item.contains("expect") ? job.item["expect"] : nlohmann::json::object(), posture, ctx.host, ctx.targets,
       job.item.value("level", "standard")});
  for (const auto& c : checks) record["checks"].push_back(verify::to_json(c));

  // Leave a marker for the next attempt's freshness check (uploaded: no shell needed).
  char tmpl[] = "/tmp/isoharness-marker-XXXXXX";
  int fd = ::mkstemp(tmpl);
  if (fd >= 0) {
    std::string text = ctx.run_id + " " + record.value("id", "") + "\n";
    (void)!::write(fd, text.data(), text.size());
    ::close(fd);
    auto up = session->upload(tmpl, kMarkerName, 0644, 20s);
    ::unlink(tmpl);
    if (!up) throw InfraError("writing the attempt marker failed: " + up.error().message);
  }
}

}  // namespace

void run_job(const Job& job, JobContext& ctx) {
  for (int attempt = 1; attempt <= job.attempts; ++attempt) {
    if (ctx.interrupted && ctx.interrupted->load()) return;
    if (ctx.infrastructure_failed.load()) return;  // fail loudly: stop starting sandboxes
    const int seq = ++ctx.sequence;
    const std::string name = "s" + std::to_string(seq);
    nlohmann::json record = base_record(job, attempt, name);
    const auto started = Clock::now();

    deploy::SandboxRequest request;
    request.run_id = ctx.run_id;
    request.name = name;
    request.item_id = job.item.value("id", "");
    request.values = job.item.contains("values") ? job.item["values"] : nlohmann::json::object();
    request.node_class = job.node_class;
    request.attempt = attempt;
    request.authorized_key = ctx.public_key_line;
    if (ctx.tamper) {
      ctx.tamper(request.item_id, job.runtime, request.values);
      record["tampered"] = true;
    }

    std::optional<deploy::SandboxHandle> handle;
    try {
      auto t = Clock::now();
      handle = ctx.backend->deploy(request);
      record["timings"]["deploy_s"] = seconds_since(t);
      record["facts"] = handle->facts;
      probe_sandbox(job, attempt, ctx, *handle, record);
    } catch (const std::exception& e) {
      record["error"] = e.what();
      ctx.infrastructure_failed = true;
    }
    if (handle) {
      auto t = Clock::now();
      ctx.backend->destroy(*handle);
      record["timings"]["destroy_s"] = seconds_since(t);
    }
    record["timings"]["total_s"] = seconds_since(started);
    ctx.journal->append("sandbox", record);
    if (ctx.on_sandbox) ctx.on_sandbox(record);
  }
}

}  // namespace isoharness::runner
