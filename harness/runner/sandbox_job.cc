#include "harness/runner/sandbox_job.h"

#include <chrono>
#include <memory>
#include <random>

#include "harness/common/error.h"
#include "harness/deploy/deploy_failed.h"
#include "harness/runner/attempt_freshness.h"
#include "harness/runner/live_sandbox.h"
#include "harness/runner/peer_probe.h"
#include "harness/runner/probe_output.h"
#include "harness/runner/sibling_probe.h"
#include "harness/verify/kubernetes_api.h"

namespace isoharness::runner {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

std::string target_flag(const deploy::EgressTarget& t) {
  const bool ipv6 = t.host.find(':') != std::string::npos;
  return t.name + "=" + (ipv6 ? "[" + t.host + "]" : t.host) + ":" + std::to_string(t.port) + "/" + t.proto +
         (t.server_name.empty() ? "" : "@" + t.server_name);
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

// Phase freshness (attempt_freshness.h): this attempt's checks; remembers what this
// sandbox's resolver was for the next attempt.
std::vector<verify::CheckResult> judge_freshness(LiveSandbox& sandbox, int attempt,
                                                 std::string& resolver_instance) {
  std::string seen_instance;
  auto checks =
      check_freshness(sandbox.session(), sandbox.handle().facts, resolver_instance, attempt, &seen_instance);
  resolver_instance = seen_instance;
  return checks;
}

// Phase upload: the agent, checked by size here; the agent's own digest of the file is
// compared after the probe (agent_upload), which saves reading it back over the connection.
UploadRecord upload_agent(LiveSandbox& sandbox) {
  UploadRecord up;
  up.bytes = sandbox.upload_isoprobe(transport::UploadCheck::size);
  up.file = sandbox.uploaded_agent().value();
  up.via = up.file.via;
  return up;
}

// The targets the plan closes get the short deadline (`--blocked`), when the witnesses judge
// egress: a drop point's record, not the sandbox's timeout, shows such an attempt was
// stopped, and the arrival witness's window outlasts the probe. Under `witness: none` the
// sandbox's report is the only evidence, and a slow way out must have the whole egress
// deadline to show that it connects.
void add_blocked_targets(const RunSettings& settings, const nlohmann::json& expect,
                         const std::vector<deploy::EgressTarget>& targets, std::vector<std::string>& argv) {
  if (settings.witness_waived || settings.blocked_deadline.count() <= 0 ||
      settings.blocked_deadline >= settings.egress_deadline)
    return;
  std::vector<std::string> blocked;
  for (const auto& target : targets)
    if (!verify::egress_target_allowed(expect, target))
      blocked.insert(blocked.end(), {"--blocked", target.name});
  if (blocked.empty()) return;
  argv.insert(argv.end(), {"--blocked-deadline-ms", std::to_string(settings.blocked_deadline.count())});
  argv.insert(argv.end(), blocked.begin(), blocked.end());
}

// isoprobe posture's command line: deadlines, the agent to digest, every target, the nonce.
std::vector<std::string> posture_argv(const RunSettings& settings, const nlohmann::json& expect,
                                      const std::vector<deploy::EgressTarget>& targets,
                                      const std::string& nonce) {
  std::vector<std::string> argv = {
      kRemoteProbe,
      "posture",
      "--deadline-ms",
      std::to_string(std::max<long>(5000, settings.posture_deadline.count() / 3)),
      "--egress-deadline-ms",
      std::to_string(settings.egress_deadline.count()),
      "--verify-file",
      kRemoteProbe,
      "--nonce",
      nonce};
  for (const auto& target : targets) {
    argv.emplace_back("--target");
    argv.push_back(target_flag(target));
  }
  add_blocked_targets(settings, expect, targets, argv);
  return argv;
}

// What one run of `isoprobe posture` gave: the document or why it is none, with the
// nonce and time window the witness is asked about.
struct PostureRun {
  Expected<nlohmann::json> read = Error{"not run"};
  std::string nonce;
  std::chrono::system_clock::time_point from, to;
};

// Phase probe: runs the agent. Hostile output (probe_output.h) is a verdict about this
// sandbox, never a reason to stop the run: output past the cap, a probe past its deadline,
// a channel the sandbox closed, or text that is no posture document make the sandbox fail
// its "posture" check. Only a dead jump connection (the harness's own path, not the
// sandbox's) is an infrastructure failure, and throws.
PostureRun run_posture(const JobContext& ctx, LiveSandbox& sandbox, const std::vector<std::string>& argv,
                       const std::string& nonce) {
  PostureRun run;
  run.nonce = nonce;
  const auto t = Clock::now();
  run.from = std::chrono::system_clock::now();
  auto result = sandbox.session().exec(argv, ctx.settings.posture_deadline, kMaxProbeOutput);
  run.to = std::chrono::system_clock::now();
  sandbox.timings()["posture_s"] = seconds_since(t);
  run.read = read_posture(result, ctx.settings.posture_deadline);
  if (!run.read && !result && ctx.reach.lost(sandbox.handle().route.jump))
    throw InfraError("the jump connection died while isoprobe ran: " + result.error().message);
  return run;
}

// Phase markers: leaves the file and process markers the next attempt must not find. A
// sandbox that will not take them (a full process table, a closed channel) fails
// attempt_markers: that is a verdict on this sandbox, and the run goes on. Only a dead jump
// connection, the harness's own path, is an infrastructure failure.
std::optional<verify::CheckResult> leave_markers(const JobContext& ctx, LiveSandbox& sandbox,
                                                 const std::string& name) {
  try {
    leave_attempt_markers(sandbox.session(), ctx.settings.run_id + " " + name + "\n");
    return std::nullopt;
  } catch (const InfraError& e) {
    if (ctx.reach.lost(sandbox.handle().route.jump)) throw;
    return verify::CheckResult{
        "attempt_markers",
        CheckStatus::fail,
        "the next attempt's file and process markers left in the sandbox",
        e.what(),
        std::string(
            "attempt_markers: the sandbox did not take the markers the next attempt is checked against: ") +
            e.what(),
        ""};
  }
}

// Every egress target of this job: the world's, and the item's own (allowed domains).
std::vector<deploy::EgressTarget> job_targets(const RunSettings& settings, const Job& job) {
  std::vector<deploy::EgressTarget> targets = settings.targets;
  if (settings.item_targets)
    for (auto& t : settings.item_targets(*job.item)) targets.push_back(std::move(t));
  return targets;
}

// runtime_version for this job: the OCI runtime of its runtime class (the job's class, "runc"
// being the node's default unless the item pins one; the profile's handler, else the class's
// own name; none: the node's default), whether the item has a GPU service, the run's time.
verify::CheckResult runtime_version_of(const RunSettings& settings, const Job& job,
                                       const deploy::SandboxFacts& facts) {
  verify::RuntimeVersionInput in{facts, settings.accepted_escapes};
  in.gpu = job.item->gpu;
  const std::string cls = job.runtime != "runc" ? job.runtime : job.item->runtime_class.value_or("");
  if (!cls.empty()) {
    const auto it = settings.runtime_handlers.find(cls);
    in.oci_runtime = it == settings.runtime_handlers.end() ? cls : it->second;
  }
  in.runsc_max_age_days = settings.runsc_max_age_days;
  return verify::check_runtime_version(in);
}

// The Kubernetes API's view of the sandbox's eval (backends that run Kubernetes objects),
// read after the probe ran: its checks join the claims, and its runtime decides `kernel`
// together with the sandbox's report.
void judge_kubernetes_api(const JobContext& ctx, const Job& job, LiveSandbox& sandbox,
                          std::vector<verify::CheckResult>& claims) {
  const auto asked = Clock::now();
  const std::optional<deploy::KubernetesApiView> view = ctx.backend.kubernetes_api(sandbox.handle());
  if (!view) return;
  sandbox.timings()["kubernetes_api_s"] = seconds_since(asked);
  const auto api =
      verify::check_kubernetes_api({job.item->values.get(), *view, ctx.settings.runtime_handlers});
  verify::apply_kubernetes_api(claims, api);
  claims.insert(claims.end(), api.begin(), api.end());
}

// The posture document judged: the witness's view of the probe run (when the backend has
// one: egress is judged on it, not on the sandbox's word), the claims, the siblings, and
// whether the agent that wrote it ran from the uploaded file (if not, nothing it claimed
// is trusted).
void judge_posture(const JobContext& ctx, const Job& job, LiveSandbox& sandbox, const PostureRun& run,
                   const std::vector<deploy::EgressTarget>& targets, NoneSiblingProbes& none_siblings,
                   PostureRecord& out) {
  nlohmann::json forged;
  if (ctx.settings.forge_posture) {
    forged = run.read.value();
    ctx.settings.forge_posture(job, forged);
  }
  const nlohmann::json& posture = ctx.settings.forge_posture ? forged : run.read.value();
  const auto asked = Clock::now();
  out.witness = ctx.backend.witness(sandbox.handle(), run.nonce, run.from, run.to);
  sandbox.timings()["witness_s"] = seconds_since(asked);
  const auto viewed = Clock::now();
  out.node_view =
      ctx.settings.given_node_view ? ctx.settings.given_node_view : ctx.backend.node_view(sandbox.handle());
  sandbox.timings()["node_view_s"] = seconds_since(viewed);
  out.claims =
      verify::verify_sandbox({job.item->expect.get(), posture, ctx.settings.host, targets, job.item->level,
                              out.witness ? &*out.witness : nullptr, ctx.settings.witness_waived,
                              out.node_view ? &*out.node_view : nullptr, ctx.settings.node_view_waived});
  out.claims.push_back(runtime_version_of(ctx.settings, job, sandbox.handle().facts));
  judge_kubernetes_api(ctx, job, sandbox, out.claims);
  out.siblings = check_siblings(job.item->values.get(), sandbox.handle().facts, posture, none_siblings);
  out.agent = check_agent_upload(posture, sandbox.uploaded_agent().value());
  if (out.agent->status != CheckStatus::pass) {
    distrust(out.claims, out.agent->control);
    distrust(out.siblings.checks, out.agent->control);
  }
}

// Phase peers (peer_probe.h): with the run's board, a fresh sandbox is a witness for its
// peers from here on (its serve listens) and is on the board until the attempt ends.
std::optional<PeerServeStart> become_peer(const JobContext& ctx, const Job& job, LiveSandbox& sandbox,
                                          const std::string& name,
                                          std::optional<BoardMembership>& membership) {
  if (!ctx.peers || ctx.settings.existing_sandbox) return std::nullopt;
  PeerServeStart serve =
      start_peer_serve(sandbox.session(), peer_serve_window(ctx.settings.posture_deadline));
  join_peer_board(ctx, job, sandbox, name, serve, membership);
  return serve;
}

// Every phase on a deployed sandbox, each phase's record kept as it comes (a phase that
// throws leaves the ones before it in the record).
void probe(const Job& job, JobContext& ctx, LiveSandbox& sandbox, AttemptRecord& rec,
           std::string& resolver_instance) {
  sandbox.connect(45s);
  const RunSettings& settings = ctx.settings;
  if (!settings.existing_sandbox) {
    const auto t = Clock::now();
    rec.freshness = judge_freshness(sandbox, rec.attempt, resolver_instance);
    sandbox.timings()["freshness_s"] = seconds_since(t);
  }
  rec.upload = upload_agent(sandbox);
  std::optional<BoardMembership> membership;  // leaves the board before the sandbox goes
  const std::optional<PeerServeStart> serve = become_peer(ctx, job, sandbox, rec.name, membership);

  const std::vector<deploy::EgressTarget> targets = job_targets(settings, job);
  const std::string nonce = draw_nonce();
  std::vector<std::string> argv = posture_argv(settings, job.item->expect.get(), targets, nonce);
  add_sibling_targets(sandbox.handle().facts, argv);
  NoneSiblingProbes none_siblings(job.item->values.get(), sandbox.handle().facts, settings.targets,
                                  settings.egress_deadline);
  const PostureRun run = run_posture(ctx, sandbox, argv, nonce);
  if (!run.read) {
    rec.probe.unreadable = posture_unreadable(run.read.error().message);
    return;
  }
  rec.probe.posture = run.read.value();
  judge_posture(ctx, job, sandbox, run, targets, none_siblings, rec.probe);
  if (serve) {
    PeerRecord peers = probe_peers(ctx, job, sandbox, rec.name, *rec.probe.posture, *serve);
    if (rec.probe.agent && rec.probe.agent->status != CheckStatus::pass)
      distrust(peers.checks, rec.probe.agent->control);
    rec.peer_checks = std::move(peers.checks);
    rec.peers = std::move(peers.summary);
  }
  if (!settings.existing_sandbox) {
    const auto t = Clock::now();
    rec.markers = leave_markers(ctx, sandbox, rec.name);
    sandbox.timings()["markers_s"] = seconds_since(t);
  }
}

// Deploys once the context's gate lets it (a job's later attempts and jobs with more
// attempts go first); the wait is in the timings.
std::unique_ptr<LiveSandbox> deploy_gated(const JobContext& ctx, const Job& job, int attempt,
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
void record_error(RunState& state, const std::exception& e, AttemptRecord& rec) {
  rec.error = e.what();
  if (dynamic_cast<const RunStoppingError*>(&e)) {
    rec.stopped_run = true;
    state.stop_run(e.what());
  }
}

// Tears the sandbox down in the background when the context has a place for it, else now.
void retire(const JobContext& ctx, std::unique_ptr<LiveSandbox> sandbox) {
  if (!ctx.teardowns) return;
  std::shared_ptr<LiveSandbox> shared(std::move(sandbox));
  ctx.teardowns->later([shared]() mutable { shared.reset(); });
}

}  // namespace

deploy::SandboxRequest make_request(const Job& job, int attempt, const std::string& name,
                                    const RunSettings& settings) {
  const policy::PlanItem& item = *job.item;
  deploy::SandboxRequest request;
  request.run_id = settings.run_id;
  request.name = name;
  request.item_id = item.id;
  request.values = item.values.get();
  request.node_class = job.node_class;
  request.attempt = attempt;
  request.authorized_key = settings.public_key_line;
  if (job.eval_set) {
    request.eval_set = *job.eval_set;
    request.task_index = item.task_index;
    request.item_index = item.item_index;
    // A matrix runtime the config does not ask for is asked for the way a user would.
    if (item.runtime_class_source == policy::RuntimeClassSource::option && item.runtime_class)
      request.add_runtime_class = *item.runtime_class;
  }
  if (!job.weakenings.empty() && !settings.weaken)
    throw InfraError("job names weakenings but the run has no selftest seam");
  if (settings.weaken) settings.weaken(job, request);
  return request;
}

AttemptRecord run_attempt(const Job& job, int attempt, JobContext& ctx, std::string& resolver_instance) {
  AttemptRecord rec;
  rec.job = &job;
  rec.attempt = attempt;
  rec.name = "s" + std::to_string(ctx.state.next_sequence());
  rec.tampered = ctx.settings.mark_tampered;
  const auto started = Clock::now();
  try {
    auto sandbox = deploy_gated(ctx, job, attempt, make_request(job, attempt, rec.name, ctx.settings));
    rec.facts = sandbox->handle().facts.to_json();
    try {
      probe(job, ctx, *sandbox, rec, resolver_instance);
    } catch (const std::exception& e) {
      record_error(ctx.state, e, rec);
    }
    rec.timings = sandbox->timings();
    retire(ctx, std::move(sandbox));
  } catch (const std::exception& e) {  // deploy failed: this sandbox's error, loud (exit 3)
    record_error(ctx.state, e, rec);
    if (const auto* held = dynamic_cast<const deploy::DeployFailed*>(&e))
      for (const auto& [k, v] : held->timings().items()) rec.timings[k] = v;
  }
  rec.timings["total_s"] = seconds_since(started);
  return rec;
}

int run_job(const Job& job, JobContext& ctx) {
  std::string resolver_instance;  // what the previous attempt's sandbox resolved (fresh_dns)
  for (int attempt = 1; attempt <= job.attempts; ++attempt) {
    if (ctx.state.interrupted()) return attempt - 1;
    if (ctx.state.stopped()) return attempt - 1;  // the run stopped (stop_reason)
    const nlohmann::json record = attempt_json(run_attempt(job, attempt, ctx, resolver_instance));
    ctx.journal.append("sandbox", record);
    if (ctx.on_sandbox) ctx.on_sandbox(record);
  }
  return job.attempts;
}

}  // namespace isoharness::runner
