#include "harness/runner/sandbox_job.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <thread>

#include "harness/common/error.h"
#include "harness/runner/attempt_freshness.h"
#include "harness/runner/live_sandbox.h"
#include "harness/runner/probe_output.h"
#include "harness/runner/sibling_probe.h"

namespace isoharness::runner {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// A jumphost that refuses a connection is tried this many more times, this far apart,
// before the run counts it as lost.
constexpr int kJumpRetries = 2;
constexpr auto kJumpRetryPause = 2s;

std::string target_flag(const deploy::EgressTarget& t) {
  const bool ipv6 = t.host.find(':') != std::string::npos;
  return t.name + "=" + (ipv6 ? "[" + t.host + "]" : t.host) + ":" + std::to_string(t.port) + "/" + t.proto;
}

nlohmann::json base_record(const Job& job, const policy::PlanItem& item, int attempt,
                           const std::string& name) {
  return {{"id", name},
          {"scenario", job.scenario},
          {"item_id", item.id},
          {"task", item.task},
          {"item", item.item},
          {"level", std::string(policy::level_name(item.level))},
          {"runtime", job.runtime},
          {"node_class", job.node_class},
          {"attempt", attempt},
          {"facts", nlohmann::json::object()},
          {"timings", nlohmann::json::object()},
          {"posture", nullptr},
          {"checks", nlohmann::json::array()},
          {"error", nullptr}};
}

std::string endpoint_key(const deploy::SshEndpoint& e) {
  return e.user + "@" + e.host + ":" + std::to_string(e.port);
}

// Whether the jump connection this sandbox is reached through has died (the harness's own
// path, not the sandbox's).
bool jump_lost(JobContext& ctx, const deploy::SshEndpoint& jump) {
  std::lock_guard lock(ctx.jump_mutex);
  auto it = ctx.jumps.find(endpoint_key(jump));
  return it == ctx.jumps.end() || !it->second || !it->second->alive();
}

// Leaves the file and process markers the next attempt must not find. A sandbox that will
// not take them (a full process table, a closed channel) fails attempt_markers: that is a
// verdict on this sandbox, and the run goes on. Only a dead jump connection, the harness's
// own path, is an infrastructure failure.
void leave_markers(JobContext& ctx, LiveSandbox& sandbox, nlohmann::json& record) {
  try {
    leave_attempt_markers(sandbox.session(), ctx.run_id + " " + record.value("id", "") + "\n");
  } catch (const InfraError& e) {
    if (jump_lost(ctx, sandbox.handle().route.jump)) throw;
    record["checks"].push_back(verify::to_json(verify::CheckResult{
        "attempt_markers", CheckStatus::fail,
        "the next attempt's file and process markers left in the sandbox", e.what(),
        std::string("attempt_markers: the sandbox did not take the markers the next attempt is checked "
                    "against: ") +
            e.what(),
        ""}));
  }
}

// 16 hex digits for this probe run: the probe puts them in every datagram and query, and
// the witness's records are tied to the sandbox by them.
std::string draw_nonce() {
  std::random_device rd;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string n;
  for (int i = 0; i < 16; ++i) n += kHex[rd() % 16];
  return n;
}

// What the result keeps of the witness's view: who, the nonce, and how much it saw.
nlohmann::json witness_summary(const deploy::WitnessView& w) {
  return {{"witness", w.witness},        {"source", w.source},     {"source6", w.source6}, {"nonce", w.nonce},
          {"records", w.records.size()}, {"complete", w.complete}, {"note", w.note}};
}

// isoprobe posture's command line: deadlines, the agent to digest, every target, the nonce.
std::vector<std::string> posture_argv(const JobContext& ctx, const std::vector<deploy::EgressTarget>& targets,
                                      const std::string& nonce) {
  std::vector<std::string> argv = {kRemoteProbe,
                                   "posture",
                                   "--deadline-ms",
                                   std::to_string(std::max<long>(5000, ctx.posture_deadline.count() / 3)),
                                   "--egress-deadline-ms",
                                   std::to_string(ctx.egress_deadline.count()),
                                   "--verify-file",
                                   kRemoteProbe,
                                   "--nonce",
                                   nonce};
  for (const auto& target : targets) {
    argv.emplace_back("--target");
    argv.push_back(target_flag(target));
  }
  return argv;
}

// Per-attempt freshness (attempt_freshness.h); remembers what this sandbox's resolver was
// for the next attempt.
void judge_freshness(transport::SandboxSession& session, LiveSandbox& sandbox, int attempt,
                     std::string& resolver_instance, nlohmann::json& record) {
  std::string seen_instance;
  for (const auto& c :
       check_freshness(session, sandbox.handle().facts, resolver_instance, attempt, &seen_instance))
    record["checks"].push_back(verify::to_json(c));
  resolver_instance = seen_instance;
}

void probe(const Job& job, int attempt, JobContext& ctx, LiveSandbox& sandbox, nlohmann::json& record,
           std::string& resolver_instance) {
  auto& session = sandbox.connect(45s);
  if (!ctx.existing_sandbox) judge_freshness(session, sandbox, attempt, resolver_instance, record);
  // Checked by size here; the agent's own digest of the file is compared below
  // (agent_upload), which saves reading the agent back over the connection.
  record["facts"]["isoprobe_upload_bytes"] = sandbox.upload_isoprobe(transport::UploadCheck::size);
  record["facts"]["isoprobe_upload_via"] = transport::upload_via_name(sandbox.uploaded_agent().value().via);

  std::vector<deploy::EgressTarget> targets = ctx.targets;
  if (ctx.item_targets)
    for (auto& t : ctx.item_targets(*job.item)) targets.push_back(std::move(t));
  const std::string nonce = draw_nonce();
  std::vector<std::string> argv = posture_argv(ctx, targets, nonce);
  add_sibling_targets(sandbox.handle().facts, argv);
  NoneSiblingProbes none_siblings(job.item->values.get(), sandbox.handle().facts, ctx.targets,
                                  ctx.egress_deadline);
  auto t = Clock::now();
  const auto window_from = std::chrono::system_clock::now();
  auto result = session.exec(argv, ctx.posture_deadline, kMaxProbeOutput);
  const auto window_to = std::chrono::system_clock::now();
  sandbox.timings()["posture_s"] = seconds_since(t);
  // Hostile output (probe_output.h): what the sandbox sent back is a verdict about this
  // sandbox, never a reason to stop the run. Output past the cap, a probe past its
  // deadline, a channel the sandbox closed, or text that is no posture document make the
  // sandbox fail its "posture" check; the other sandboxes still run. Only a dead jump
  // connection (the harness's own path, not the sandbox's) is an infrastructure failure.
  auto read = read_posture(result, ctx.posture_deadline);
  if (!read) {
    if (!result && jump_lost(ctx, sandbox.handle().route.jump))
      throw InfraError("the jump connection died while isoprobe ran: " + result.error().message);
    record["checks"].push_back(verify::to_json(posture_unreadable(read.error().message)));
    return;
  }
  const nlohmann::json& posture = read.value();
  record["posture"] = posture;

  // The outside witness's record of this probe run (deploy::Backend::witness), when the
  // backend has one: egress is judged on it, not on the sandbox's word.
  const auto witness =
      ctx.backend ? ctx.backend->witness(sandbox.handle(), nonce, window_from, window_to) : std::nullopt;
  if (witness) record["witness"] = witness_summary(*witness);
  const std::size_t first_claim = record["checks"].size();
  for (const auto& c : verify::verify_sandbox({job.item->expect.get(), posture, ctx.host, targets,
                                               std::string(policy::level_name(job.item->level)),
                                               witness ? &*witness : nullptr}))
    record["checks"].push_back(verify::to_json(c));
  record["checks"].push_back(verify::to_json(verify::check_runtime_version(sandbox.handle().facts)));
  check_siblings(job.item->values.get(), sandbox.handle().facts, posture, none_siblings, record);
  const auto agent = check_agent_upload(posture, sandbox.uploaded_agent().value());
  if (agent.status != CheckStatus::pass) distrust_from(record["checks"], first_claim, agent.control);
  record["checks"].push_back(verify::to_json(agent));

  if (!ctx.existing_sandbox) leave_markers(ctx, sandbox, record);
}

// Deploys once the context's gate lets it (a job's later attempts and jobs with more
// attempts go first); the wait is in the timings.
std::unique_ptr<LiveSandbox> deploy_gated(JobContext& ctx, const Job& job, int attempt,
                                          const deploy::SandboxRequest& request) {
  const auto queued = Clock::now();
  GatePass pass(ctx.deploy_gate, deploy_priority(job.attempts, attempt));
  const double waited = seconds_since(queued);
  auto sandbox = std::make_unique<LiveSandbox>(ctx, request);
  sandbox->timings()["deploy_queue_s"] = waited;
  return sandbox;
}

// The sandbox's error. Only a failure no later sandbox can escape stops the run; any other
// (a failed start, a sandbox that never came up, a dead session) is this sandbox's alone.
void record_error(JobContext& ctx, const std::exception& e, nlohmann::json& record) {
  record["error"] = e.what();
  if (dynamic_cast<const RunStoppingError*>(&e)) {
    record["stopped_run"] = true;
    ctx.stop_run(e.what());
  }
}

// Tears the sandbox down in the background when the context has a place for it, else now.
void retire(JobContext& ctx, std::unique_ptr<LiveSandbox> sandbox) {
  if (!ctx.teardowns) return;
  std::shared_ptr<LiveSandbox> shared(std::move(sandbox));
  ctx.teardowns->later([shared]() mutable { shared.reset(); });
}

}  // namespace

transport::JumpConnection& JobContext::jump_for(const deploy::SshEndpoint& jump) {
  std::lock_guard lock(jump_mutex);
  auto& conn = jumps[endpoint_key(jump)];
  if (conn && conn->alive()) return *conn;
  if (conn) {  // dead: keep what it accepted, then reconnect
    for (auto& k : conn->accepted_keys()) accepted_keys.push_back(std::move(k));
    conn.reset();
  }
  if (jump_key_must_be_pinned && jump.host_key.empty() && host_key_policy.known_hosts_path.empty())
    throw RunStoppingError(
        "the jumphost " + endpoint_key(jump) +
        " has no pinned key: sandbox keys are accepted on first use only through a pinned jumphost "
        "(set hawk.jumphost_host_key, or pass --accept-new-host-keys)");
  auto opened = transport::JumpConnection::connect(jump, credentials, host_key_policy, 20s);
  for (int again = 0; !opened && again < kJumpRetries && !(interrupted && interrupted->load()); ++again) {
    std::this_thread::sleep_for(kJumpRetryPause);  // one refused connection is not yet a lost jumphost
    opened = transport::JumpConnection::connect(jump, credentials, host_key_policy, 20s);
  }
  if (!opened) {
    const std::string what = "cannot reach the jumphost " + jump.host + ":" + std::to_string(jump.port) +
                             " (" + std::to_string(kJumpRetries + 1) + " tries): " + opened.error().message;
    // The harness's own path: with no other jumphost answering, no later sandbox can be reached.
    bool another_alive = false;
    for (const auto& [key, other] : jumps) another_alive |= other && other->alive();
    if (another_alive) throw InfraError(what);
    throw RunStoppingError(what);
  }
  conn = std::move(opened.value());
  return *conn;
}

void JobContext::close_jumps() {
  std::lock_guard lock(jump_mutex);
  for (auto& [key, conn] : jumps)
    if (conn)
      for (auto& k : conn->accepted_keys()) accepted_keys.push_back(std::move(k));
  jumps.clear();
}

deploy::SandboxRequest make_request(const Job& job, int attempt, const std::string& name, JobContext& ctx) {
  const policy::PlanItem& item = *job.item;
  deploy::SandboxRequest request;
  request.run_id = ctx.run_id;
  request.name = name;
  request.item_id = item.id;
  request.values = item.values.get();
  request.node_class = job.node_class;
  request.attempt = attempt;
  request.authorized_key = ctx.public_key_line;
  request.test_weakenings = ctx.test_weakenings;
  if (job.eval_set) {
    request.eval_set = *job.eval_set;
    request.task_index = item.task_index;
    request.item_index = item.item_index;
    // A matrix runtime the config does not ask for is asked for the way a user would.
    if (item.runtime_class_source == "option" && item.runtime_class)
      request.add_runtime_class = *item.runtime_class;
  }
  if (ctx.tamper) ctx.tamper(request.item_id, job.runtime, request.values);
  if (!job.weakenings.empty()) {
    if (!ctx.weaken) throw InfraError("job names weakenings but the run has no selftest seam");
    ctx.weaken(job, request);
  }
  return request;
}

void JobContext::stop_run(const std::string& why) {
  std::lock_guard lock(stop_mutex);
  if (stop_reason_.empty()) stop_reason_ = why;
  infrastructure_failed = true;
}

std::string JobContext::stop_reason() {
  std::lock_guard lock(stop_mutex);
  if (stop_reason_.empty() && interrupted && interrupted->load())
    return "the run was interrupted by a signal";
  return stop_reason_;
}

int run_job(const Job& job, JobContext& ctx) {
  const policy::PlanItem& item = *job.item;
  std::string resolver_instance;  // what the previous attempt's sandbox resolved (fresh_dns)
  for (int attempt = 1; attempt <= job.attempts; ++attempt) {
    if (ctx.interrupted && ctx.interrupted->load()) return attempt - 1;
    if (ctx.infrastructure_failed.load()) return attempt - 1;  // the run stopped (stop_reason)
    const std::string name = "s" + std::to_string(++ctx.sequence);
    nlohmann::json record = base_record(job, item, attempt, name);
    if (ctx.tamper || !ctx.test_weakenings.empty()) record["tampered"] = true;
    if (!job.weakenings.empty()) record["weakenings"] = job.weakenings;
    const auto started = Clock::now();
    try {
      auto sandbox = deploy_gated(ctx, job, attempt, make_request(job, attempt, name, ctx));
      record["facts"] = sandbox->handle().facts;
      try {
        probe(job, attempt, ctx, *sandbox, record, resolver_instance);
      } catch (const std::exception& e) {
        record_error(ctx, e, record);
      }
      record["timings"] = sandbox->timings();
      retire(ctx, std::move(sandbox));
    } catch (const std::exception& e) {  // deploy failed: this sandbox's error, loud (exit 3)
      record_error(ctx, e, record);
    }
    record["timings"]["total_s"] = seconds_since(started);
    ctx.journal->append("sandbox", record);
    if (ctx.on_sandbox) ctx.on_sandbox(record);
  }
  return job.attempts;
}

}  // namespace isoharness::runner
