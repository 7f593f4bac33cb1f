#include "harness/runner/runner.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <random>

#include "harness/common/error.h"
#include "harness/runner/check_tally.h"
#include "harness/runner/fanout.h"
#include "harness/runner/matrix.h"
#include "harness/runner/refusal.h"
#include "harness/runner/run_support.h"
#include "harness/runner/sandbox_job.h"
#include "harness/runner/session.h"
#include "harness/scenario/scenario.h"

namespace isoharness::runner {
namespace fs = std::filesystem;

namespace {

// One line per finished sandbox: counts, verdict, time, and the error or first failure.
void print_progress(const nlohmann::json& rec, int done, int total, bool color) {
  CheckTally t;
  add_record(t, rec);
  const Verdict verdict = verdict_of(t);
  const char* colour = color ? (verdict == Verdict::pass ? "\033[32m" : "\033[31m") : "";
  const char* reset = color ? "\033[0m" : "";
  std::fprintf(stderr, "[%d/%d] %-12s %-40s %-7s %-9s #%d  %s%-5s%s %3d pass %2d fail  %5.1fs\n", done, total,
               rec.value("scenario", "").c_str(), rec.value("item_id", "").substr(0, 40).c_str(),
               rec.value("runtime", "").c_str(), rec.value("node_class", "").c_str(), rec.value("attempt", 0),
               colour, std::string(verdict_word(verdict)).c_str(), reset, t.pass, t.fail,
               rec["timings"].value("total_s", 0.0));
  if (!rec["error"].is_null())
    std::fprintf(stderr, "        error: %s\n", rec["error"].get<std::string>().c_str());
  else if (t.fail)
    std::fprintf(stderr, "        first failure: %s\n", t.first_failure.c_str());
  if (t.unwitnessed)
    std::fprintf(stderr, "        %d unwitnessed, first: %s\n", t.unwitnessed,
                 t.unwitnessed_checks.front().c_str());
}

}  // namespace

std::vector<std::string> default_scenarios(const std::string& scenarios_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(scenarios_dir, ec)) {
    if (!e.is_regular_file()) continue;
    auto ext = e.path().extension().string();
    if (ext == ".yaml" || ext == ".yml") out.push_back(e.path().string());
  }
  // Configs the platform must refuse (scenarios/refused/) run with every default set.
  for (const auto& e : fs::directory_iterator(fs::path(scenarios_dir) / "refused", ec)) {
    auto ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml")) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

void check_run_config(const RunConfig& config) {
  if (config.command.backend == scenario::BackendKind::existing)
    throw UserError(
        "run deploys its sandboxes: backend local or hawk (isoharness check probes one that is up)");
  if (config.parallel < 1 || config.parallel > 64) throw UserError("--parallel must be between 1 and 64");
  if (config.deploy_parallel < 0 || config.deploy_parallel > 64)
    throw UserError("--deploy-parallel must be between 1 and 64 (0 in a RunConfig: two per CPU)");
}

// Every planned scenario's jobs; the command line's runtimes, node classes and attempts
// stand in for the scenario's matrix.
std::vector<Job> expand_all_jobs(const RunConfig& config, const std::vector<Planned>& planned,
                                 const scenario::DeploymentProfile& profile,
                                 const std::string& deployment_path, std::vector<Skipped>& skipped) {
  const std::vector<std::string> gvisor_classes = gvisor_runtime_classes(profile);
  std::vector<Job> jobs;
  for (const auto& p : planned) {
    const auto& m = p.scenario.matrix;
    expand_planned_jobs(p, p.items, config.runtimes.empty() ? m.runtimes : config.runtimes,
                        config.node_classes.empty() ? m.node_classes : config.node_classes,
                        config.attempts.value_or(m.attempts), gvisor_classes, jobs, skipped);
  }
  for (const auto& nc : config.node_classes) {
    if (std::find(profile.node_classes.begin(), profile.node_classes.end(), nc) == profile.node_classes.end())
      throw UserError("node class '" + nc + "' is not in deployment profile " + deployment_path);
  }
  return jobs;
}

HeaderParts run_header(const std::vector<Planned>& planned, const std::vector<RefusalJob>& refusals,
                       const std::vector<Skipped>& skipped) {
  HeaderParts header;
  for (const auto& p : planned) {
    header.plans[p.scenario.name] = policy::to_json(p.plan);
    header.scenario_names.push_back(p.scenario.name);
    add_plan_findings(p.scenario.name, p.plan, header.findings);
  }
  add_escape_table_findings(header.findings);
  for (const auto& r : refusals) header.scenario_names.push_back(r.scenario.name);
  for (const auto& s : skipped)
    header.skipped.push_back(
        {{"scenario", s.scenario}, {"item_id", s.item_id}, {"runtime", s.runtime}, {"reason", s.reason}});
  return header;
}

// Every attempt the run did not reach, with why: the result's `skipped` (not_run), an error
// in both reports, and a line each at the end of the console.
void record_not_run(const RunState& state, Journal& journal, const std::vector<Job>& jobs,
                    const std::vector<int>& ran, const std::string& fallback) {
  std::string why = state.stop_reason();
  if (why.empty()) why = fallback;
  for (std::size_t i = 0; i < jobs.size(); ++i)
    for (int attempt = ran[i] + 1; attempt <= jobs[i].attempts; ++attempt)
      journal.append("skipped", {{"scenario", jobs[i].scenario},
                                 {"item_id", jobs[i].item->id},
                                 {"runtime", jobs[i].runtime},
                                 {"node_class", jobs[i].node_class},
                                 {"attempt", attempt},
                                 {"not_run", true},
                                 {"reason", "not run: " + why}});
}

// The refusals, then the jobs fanned out (fanout.h): jobs with more attempts first,
// deploys gated, teardown behind. Returns how many attempts of each job were recorded.
std::vector<int> run_sandboxes(const JobContext& base, std::vector<Job>& jobs,
                               const std::vector<RefusalJob>& refusals, int parallel, int deploy_parallel) {
  DeployGate deploy_gate(deploy_parallel);
  Background teardowns;  // waited for before the gate and the context go
  JobContext ctx = base;
  ctx.deploy_gate = &deploy_gate;
  ctx.teardowns = &teardowns;
  for (const auto& r : refusals) run_refusal(r, ctx);
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const Job& a, const Job& b) { return a.attempts > b.attempts; });
  std::vector<int> ran(jobs.size(), 0);  // each index written by the one thread that ran it
  for_each_parallel(
      jobs.size(), parallel, [&](std::size_t i) { ran[i] = run_job(jobs[i], ctx); }, &ctx.state.stop_flag());
  teardowns.wait();
  return ran;
}

// RunConfig's test seams as the settings' one weakening hook: every request gets the named
// backend weakenings and the values edit, and every record says "tampered".
void use_test_seams(const RunConfig& config, RunSettings& settings) {
  if (!config.tamper && config.test_weakenings.empty() && !config.forge_posture) return;
  settings.mark_tampered = true;
  settings.forge_posture = config.forge_posture;
  settings.weaken = [tamper = config.tamper, names = config.test_weakenings](
                        const Job& job, deploy::SandboxRequest& request) {
    request.test_weakenings = names;
    if (tamper) tamper(request.item_id, job.runtime, request.values);
  };
}

// In-flight sandboxes at once: on a platform that limits live evals per user
// (hawk.max_live_evals), that limit, and deploys are not gated by this machine's CPUs
// (they are the platform's waiting); else --parallel and --deploy-parallel.
std::pair<int, int> in_flight_bounds(const RunConfig& config, const scenario::DeploymentProfile& profile) {
  const int deploys = config.deploy_parallel > 0 ? config.deploy_parallel : default_deploy_parallel();
  if (config.command.backend == scenario::BackendKind::hawk && profile.hawk &&
      profile.hawk->max_live_evals > 0)
    return {profile.hawk->max_live_evals, profile.hawk->max_live_evals};
  return {config.parallel, deploys};
}

}  // namespace

RunOutcome run(const RunConfig& config) {
  check_run_config(config);
  // 1. Load and plan everything first: bad input stops the run before anything is deployed.
  const std::string deployment_path =
      find_deployment(config.command.deployment_path, config.command.scenarios_dir, config.command.backend);
  scenario::DeploymentProfile profile = scenario::load_deployment(deployment_path);
  std::vector<std::string> paths =
      config.scenario_paths.empty() ? default_scenarios(config.command.scenarios_dir) : config.scenario_paths;
  if (paths.empty()) throw UserError("no scenario files found in " + config.command.scenarios_dir);
  const std::vector<RefusalJob> refusals = take_refusals(paths, profile);
  std::vector<Planned> planned = plan_scenarios(paths, profile, config.deny_known_risks);
  std::vector<Skipped> skipped;
  std::vector<Job> jobs = expand_all_jobs(config, planned, profile, deployment_path, skipped);

  // 2. The run's session: id, key, signals, journal, backend. Posture needs no timing
  // workloads: the small static agent is uploaded, unless a bundle is named.
  RunSession session(
      {.command = config.command,
       .profile = &profile,
       .deployment_path = deployment_path,
       .isoprobe_bundle = find_isoprobe_bundle(config.command.isoprobe_bundle, kPostureAgentDir)});
  session.open_journal(run_header(planned, refusals, skipped));

  const auto [parallel, deploy_parallel] = in_flight_bounds(config, profile);
  std::fprintf(
      stderr, "isoharness run %s: %zu scenario(s), %zu sandbox job(s), backend %s, parallel %d, deploys %d\n",
      session.run_id().c_str(), planned.size(), jobs.size(),
      std::string(scenario::backend_name(config.command.backend)).c_str(), parallel, deploy_parallel);

  use_test_seams(config, session.settings());
  session.settings().egress_deadline = std::chrono::milliseconds(profile.egress_deadline_ms);
  session.settings().blocked_deadline = std::chrono::milliseconds(profile.egress_blocked_deadline_ms);
  session.settings().peers_per_sandbox = profile.peers_per_sandbox;
  int total_sandboxes = static_cast<int>(refusals.size());
  for (const auto& j : jobs) total_sandboxes += j.attempts;
  std::mutex print_mutex;
  int done = 0;
  std::vector<int> ran(jobs.size(), 0);
  if (session.start_backend()) {
    JobContext ctx = session.jobs();
    ctx.on_sandbox = [&](const nlohmann::json& rec) {
      std::lock_guard lock(print_mutex);
      print_progress(rec, ++done, total_sandboxes, config.color);
    };
    ran = run_sandboxes(ctx, jobs, refusals, parallel, deploy_parallel);
  }
  record_not_run(session.state(), session.journal(), jobs, ran,
                 session.infra_error().empty() ? "the run stopped" : session.infra_error());

  // 3. The result document, from the journal (what was measured is what is reported).
  return session.finish(total_sandboxes);
}

}  // namespace isoharness::runner
