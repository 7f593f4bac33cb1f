#include "harness/runner/runner.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>

#include "harness/common/error.h"
#include "harness/common/subprocess.h"
#include "harness/policy/plan.h"
#include "harness/runner/context.h"
#include "harness/runner/fanout.h"
#include "harness/runner/journal.h"
#include "harness/runner/matrix.h"
#include "harness/runner/run_support.h"
#include "harness/runner/sandbox_job.h"
#include "harness/scenario/scenario.h"
#include "reports/reports.h"

namespace isoharness::runner {
namespace fs = std::filesystem;

std::vector<std::string> default_scenarios(const std::string& scenarios_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(scenarios_dir, ec)) {
    if (!e.is_regular_file()) continue;
    auto ext = e.path().extension().string();
    if (ext == ".yaml" || ext == ".yml") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

RunOutcome run(const RunConfig& config) {
  if (config.backend != "local") {
    throw UserError("backend '" + config.backend + "' is not available in this build; use --backend local");
  }
  if (config.parallel < 1 || config.parallel > 64) throw UserError("--parallel must be between 1 and 64");
  if (config.deploy_parallel < 0 || config.deploy_parallel > 64)
    throw UserError("--deploy-parallel must be between 1 and 64");

  // 1. Load and plan everything first: bad input stops the run before anything is deployed.
  const std::string deployment_path = find_deployment(config.deployment_path, config.scenarios_dir, config.backend);
  scenario::DeploymentProfile profile = scenario::load_deployment(deployment_path);
  std::vector<std::string> paths = config.scenario_paths.empty() ? default_scenarios(config.scenarios_dir)
                                                                 : config.scenario_paths;
  if (paths.empty()) throw UserError("no scenario files found in " + config.scenarios_dir);

  const std::vector<std::string> gvisor_classes = gvisor_runtime_classes(profile);
  std::vector<Planned> planned = plan_scenarios(paths, profile, config.deny_known_risks);

  std::vector<Job> jobs;
  std::vector<Skipped> skipped;
  for (const auto& p : planned) {
    const auto& m = p.scenario.matrix;
    expand_jobs(p.scenario.name, p.plan, p.gvisor_plan, config.runtimes.empty() ? m.runtimes : config.runtimes,
                config.node_classes.empty() ? m.node_classes : config.node_classes,
                config.attempts.value_or(m.attempts), gvisor_classes, jobs, skipped);
  }
  for (const auto& nc : config.node_classes) {
    if (std::find(profile.node_classes.begin(), profile.node_classes.end(), nc) == profile.node_classes.end())
      throw UserError("node class '" + nc + "' is not in deployment profile " + deployment_path);
  }

  // Posture needs no timing workloads: the small static agent, unless a bundle is named.
  const std::string bundle = find_isoprobe_bundle(config.isoprobe_bundle, kPostureAgentDir);

  // 2. The run's infrastructure.
  const std::string run_id = random_run_id();
  SignalGuard signals;
  RunKey key(run_id);

  nlohmann::json context = run_context(config.backend, deployment_path);
  nlohmann::json plans = nlohmann::json::object();
  nlohmann::json findings = nlohmann::json::array();
  std::vector<std::string> scenario_names;
  for (const auto& p : planned) {
    plans[p.scenario.name] = p.plan;
    scenario_names.push_back(p.scenario.name);
    for (const auto& item : p.plan["items"])
      for (const auto& f : item.value("findings", nlohmann::json::array()))
        findings.push_back({{"scenario", p.scenario.name}, {"item_id", item.value("id", "")},
                            {"code", f.value("code", "")}, {"severity", f.value("severity", "")},
                            {"message", f.value("message", "")}});
  }
  nlohmann::json skipped_json = nlohmann::json::array();
  for (const auto& s : skipped)
    skipped_json.push_back({{"scenario", s.scenario}, {"item_id", s.item_id}, {"runtime", s.runtime}, {"reason", s.reason}});

  nlohmann::json header = {{"schema", "isoharness.result/v1"},
                           {"context", context},
                           {"run", {{"id", run_id}, {"scenarios", scenario_names}, {"argv", config.argv}}},
                           {"plans", plans},
                           {"findings", findings},
                           {"skipped", skipped_json}};
  Journal journal(config.out_dir, header);

  const int deploy_parallel = config.deploy_parallel > 0 ? config.deploy_parallel : default_deploy_parallel();
  std::fprintf(stderr, "isoharness run %s: %zu scenario(s), %zu sandbox job(s), backend %s, parallel %d, deploys %d\n",
               run_id.c_str(), planned.size(), jobs.size(), config.backend.c_str(), config.parallel, deploy_parallel);

  JobContext ctx;
  ctx.use_key(run_id, key);
  ctx.journal = &journal;
  ctx.host_key_policy.accept_new = config.accept_new_host_keys;
  ctx.isoprobe_bundle = bundle;
  ctx.host = verify::read_host_facts();
  ctx.posture_deadline = config.posture_deadline;
  ctx.egress_deadline = std::chrono::milliseconds(profile.egress_deadline_ms);
  ctx.tamper = config.tamper;
  ctx.test_weakenings = config.test_weakenings;
  ctx.interrupted = &g_interrupted;

  int total_sandboxes = 0;
  for (const auto& j : jobs) total_sandboxes += j.attempts;
  std::mutex print_mutex;
  int done = 0;
  ctx.on_sandbox = [&](const nlohmann::json& rec) {
    int pass = 0, fail = 0;
    std::string first_fail;
    for (const auto& c : rec["checks"]) {
      if (c.value("status", "") == "pass") ++pass;
      if (c.value("status", "") == "fail") {
        ++fail;
        if (first_fail.empty()) first_fail = c.value("reason", "");
      }
    }
    std::string verdict = !rec["error"].is_null() ? "ERROR" : (fail ? "FAIL" : "PASS");
    const char* colour = "";
    const char* reset = "";
    if (config.color) {
      colour = verdict == "PASS" ? "\033[32m" : "\033[31m";
      reset = "\033[0m";
    }
    std::lock_guard lock(print_mutex);
    ++done;
    std::fprintf(stderr, "[%d/%d] %-12s %-40s %-7s %-9s #%d  %s%-5s%s %3d pass %2d fail  %5.1fs\n", done,
                 total_sandboxes, rec.value("scenario", "").c_str(), rec.value("item_id", "").substr(0, 40).c_str(),
                 rec.value("runtime", "").c_str(), rec.value("node_class", "").c_str(), rec.value("attempt", 0),
                 colour, verdict.c_str(), reset, pass, fail, rec["timings"].value("total_s", 0.0));
    if (!rec["error"].is_null()) std::fprintf(stderr, "        error: %s\n", rec["error"].get<std::string>().c_str());
    else if (fail) std::fprintf(stderr, "        first failure: %s\n", first_fail.c_str());
  };

  nlohmann::json backend_context;
  std::string infra_error;
  {
    std::unique_ptr<deploy::Backend> backend;
    try {
      backend = make_backend(config.backend, profile, run_id);
      ctx.backend = backend.get();
      ctx.targets = backend->egress_targets();
      backend_context = backend->context();
    } catch (const InfraError& e) {
      infra_error = e.what();
    }

    if (backend) {
      // Fan-out (fanout.h): jobs with more attempts first, deploys gated, teardown behind.
      std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.attempts > b.attempts; });
      DeployGate deploy_gate(deploy_parallel);
      Background teardowns;
      ctx.deploy_gate = &deploy_gate;
      ctx.teardowns = &teardowns;
      for_each_parallel(jobs.size(), config.parallel, [&](std::size_t i) { run_job(jobs[i], ctx); }, &g_interrupted);
      teardowns.wait();
      ctx.deploy_gate = nullptr;
      ctx.teardowns = nullptr;
      {
        std::lock_guard lock(ctx.jump_mutex);
        if (ctx.jump) ctx.accepted_keys = ctx.jump->accepted_keys();
        ctx.jump.reset();
      }
    }
    // The backend (and its world) is destroyed here, also when a job failed.
  }

  // 3. The result document, from the journal (what was measured is what is reported).
  nlohmann::json result = result_from_journal(config.out_dir + "/journal.jsonl");
  for (auto& [k, v] : backend_context.items()) result["context"][k] = v;
  result["context"]["finished"] = utc_now();
  nlohmann::json accepted = nlohmann::json::array();
  for (const auto& k : ctx.accepted_keys)
    accepted.push_back({{"host", k.host}, {"port", k.port}, {"key", k.key_line}, {"fingerprint", k.fingerprint}});
  result["accepted_host_keys"] = accepted;
  result["parity"] = nullptr;

  int checks = 0, pass = 0, fail = 0, na = 0, errors_n = 0;
  for (const auto& s : result["sandboxes"]) {
    if (!s["error"].is_null()) ++errors_n;
    for (const auto& c : s["checks"]) {
      ++checks;
      std::string st = c.value("status", "");
      if (st == "pass") ++pass;
      else if (st == "fail") ++fail;
      else ++na;
    }
  }
  bool interrupted = g_interrupted.load();
  bool incomplete = static_cast<int>(result["sandboxes"].size()) < total_sandboxes;
  std::string verdict = (!infra_error.empty() || errors_n || interrupted || incomplete) ? "error" : (fail ? "fail" : "pass");
  result["summary"] = {{"sandboxes", result["sandboxes"].size()},
                       {"planned_sandboxes", total_sandboxes},
                       {"checks", checks},
                       {"pass", pass},
                       {"fail", fail},
                       {"na", na},
                       {"errors", errors_n},
                       {"interrupted", interrupted},
                       {"infrastructure_error", infra_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(infra_error)},
                       {"verdict", verdict}};

  RunOutcome outcome;
  outcome.result_path = journal.finalise(result);
  outcome.reports = reports::write_all(result, config.out_dir);
  outcome.exit_code = verdict == "pass" ? kExitPass : (verdict == "fail" ? kExitVerdictFailed : kExitInfrastructure);
  if (!infra_error.empty()) std::fprintf(stderr, "infrastructure failure: %s\n", infra_error.c_str());
  if (interrupted) std::fprintf(stderr, "interrupted: every sandbox was torn down\n");
  std::fprintf(stderr, "%s: %d sandboxes, %d checks: %d pass, %d fail, %d n/a, %d errors — result %s\n",
               verdict == "pass" ? "PASS" : (verdict == "fail" ? "FAIL" : "ERROR"),
               static_cast<int>(result["sandboxes"].size()), checks, pass, fail, na, errors_n,
               outcome.result_path.c_str());
  outcome.result = std::move(result);
  return outcome;
}

}  // namespace isoharness::runner
