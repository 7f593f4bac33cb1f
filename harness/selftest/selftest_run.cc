// run_selftest: plan the selftest scenario, build the jobs, run them in parallel on one
// backend (with a live peer sandbox when a weakening needs one), judge, write the reports.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "harness/common/error.h"
#include "harness/common/verdict.h"
#include "harness/runner/check_tally.h"
#include "harness/runner/context.h"
#include "harness/runner/journal.h"
#include "harness/runner/live_sandbox.h"
#include "harness/runner/peer_probe.h"
#include "harness/runner/run_support.h"
#include "harness/runner/sandbox_job.h"
#include "harness/runner/session.h"
#include "harness/selftest/detection.h"
#include "harness/selftest/lying_agent.h"
#include "harness/selftest/selftest.h"
#include "harness/selftest/selftest_files.h"
#include "harness/selftest/selftest_jobs.h"
#include "harness/verify/verify.h"

namespace isoharness::selftest {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Planned {
  std::string deployment_path;
  scenario::DeploymentProfile profile;
  runner::Planned scenario;
  SelftestJobs jobs;
};

Planned plan(const SelftestConfig& config, const std::vector<const Weakening*>& weakenings) {
  const std::string path = selftest_scenario(config.command.scenarios_dir);
  if (!std::filesystem::exists(path)) throw UserError("selftest scenario not found: " + path);
  std::string deployment = runner::find_deployment(config.command.deployment_path,
                                                   config.command.scenarios_dir, config.command.backend);
  scenario::DeploymentProfile profile = scenario::load_deployment(deployment);
  auto planned = runner::plan_scenarios({path}, profile, false);
  const auto& p = planned.front();
  if (p.scenario.matrix.node_classes.empty()) throw UserError(path + ": matrix.node_classes is empty");
  std::vector<runner::Job> base;
  std::vector<runner::Skipped> skipped;
  runner::expand_jobs(p.scenario.name, p.items, p.gvisor_items, config.runtimes,
                      {p.scenario.matrix.node_classes.front()}, 1, runner::gvisor_runtime_classes(profile),
                      base, skipped);
  return {deployment, profile, p, make_jobs(base, skipped, config.runtimes, weakenings)};
}

std::string label_of(const json& record) {
  if (record.contains("weakenings") && record["weakenings"].is_array() && !record["weakenings"].empty())
    return record["weakenings"][0].get<std::string>();
  return "(clean)";
}

// One progress line per sandbox: what was weakened and which controls failed.
std::function<void(const json&)> progress(const SelftestConfig& config, int total) {
  auto mutex = std::make_shared<std::mutex>();
  auto done = std::make_shared<int>(0);
  return [=, color = config.color](const json& rec) {
    std::string failed;
    for (const auto& c : rec["checks"])
      if (check_status_from_label(c.value("status", "")) == CheckStatus::fail)
        failed += (failed.empty() ? "" : ",") + c.value("control", "");
    std::string state =
        !rec["error"].is_null() ? "ERROR" : (failed.empty() ? "no check failed" : "failed: " + failed);
    const char* on = color ? (rec["error"].is_null() ? "\033[36m" : "\033[31m") : "";
    std::lock_guard lock(*mutex);
    std::fprintf(stderr, "[%d/%d] %-7s %-30s #%d  %s%s%s  %5.1fs\n", ++*done, total,
                 rec.value("runtime", "").c_str(), label_of(rec).c_str(), rec.value("attempt", 0), on,
                 state.substr(0, 160).c_str(), color ? "\033[0m" : "", rec["timings"].value("total_s", 0.0));
    if (!rec["error"].is_null())
      std::fprintf(stderr, "        error: %s\n", rec["error"].get<std::string>().c_str());
  };
}

// Unlike `run`, a weakening that cannot be applied does not stop the others: it is an
// error of its own cell (the exit code is still 3), and the rest are still measured.
void run_jobs(const std::vector<runner::Job>& jobs, int parallel, runner::JobContext& ctx) {
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> workers;
  int n = std::min<int>(parallel, static_cast<int>(std::max<std::size_t>(jobs.size(), 1)));
  workers.reserve(n);
  for (int w = 0; w < n; ++w)
    workers.emplace_back([&] {
      for (std::size_t i; (i = next++) < jobs.size() && !runner::g_interrupted;) {
        ctx.state.resume();
        runner::run_job(jobs[i], ctx);
      }
    });
  for (auto& t : workers) t.join();
}

// Deploys the sandbox other sandboxes must not reach and names it as an egress target.
// It joins the settings' targets before any job starts.
void start_peer(const Planned& p, runner::RunSession& session, std::optional<runner::LiveSandbox>& peer) {
  if (!p.jobs.needs_peer || p.jobs.base.empty()) return;
  const runner::Job& job = p.jobs.base.count("runc") ? p.jobs.base.at("runc") : p.jobs.base.begin()->second;
  peer.emplace(session.jobs(), runner::make_request(job, 1, "peer", session.settings()));
  const std::string address = peer->handle().facts.address;
  if (address.empty()) throw InfraError("selftest: the peer sandbox has no address in its facts");
  auto& targets = session.settings().targets;
  targets.push_back({kPeerTarget, address, 2222, "tcp", "", "sandbox"});
  // Other sandboxes over IPv6 too, where the peer has an IPv6 address (its sshd listens on both).
  const std::string address6 = peer->handle().facts.address6;
  if (!address6.empty()) targets.push_back({kPeerTarget6, address6, 2222, "tcp", "", "sandbox"});
}

// The peer is also every job's peer sandbox of another eval (peers:*): its serve listens for
// the whole selftest (bounded) and it is on the run's board until it goes.
void serve_as_peer(runner::RunSession& session, runner::LiveSandbox& peer,
                   std::optional<runner::BoardMembership>& membership) {
  using namespace std::chrono_literals;
  peer.connect(45s);
  peer.upload_isoprobe(transport::UploadCheck::size);
  const runner::PeerServeStart serve = runner::start_peer_serve(peer.session(), 30min);
  if (!serve.listening)
    throw InfraError("selftest: the peer sandbox's serve does not listen: " + serve.detail);
  runner::JobContext ctx = session.jobs();
  runner::PeerBoard* board = ctx.peers;
  board->join(
      {"peer",
       (peer.handle().facts.item_id.empty() ? std::string("selftest-peer") : peer.handle().facts.item_id),
       "selftest-peer", serve.ipv4, serve.ipv6, peer.handle().route});
  membership.emplace(board, "peer", 30s);
}

runner::HeaderParts header_of(const Planned& p) {
  runner::HeaderParts header;
  header.kind = "selftest";
  header.scenario_names = {p.scenario.scenario.name};
  header.plans[p.scenario.scenario.name] = policy::to_json(p.scenario.plan);
  return header;
}

// The peer sandbox, then every job, on the session's backend. An infrastructure failure
// is recorded in the session (the verdict becomes error), never thrown.
void run_on_backend(const Planned& p, int parallel, runner::RunSession& session,
                    const std::function<void(const json&)>& on_sandbox) {
  auto report = [&] { std::fprintf(stderr, "infrastructure failure: %s\n", session.infra_error().c_str()); };
  if (!session.start_backend()) {
    report();
    return;
  }
  try {
    std::optional<runner::LiveSandbox> peer;          // destroyed before the backend
    std::optional<runner::BoardMembership> on_board;  // leaves the board before the peer goes
    start_peer(p, session, peer);
    if (peer) serve_as_peer(session, *peer, on_board);
    runner::JobContext ctx = session.jobs();
    ctx.on_sandbox = on_sandbox;
    run_jobs(p.jobs.jobs, parallel, ctx);
    run_jobs(p.jobs.alone, 1, ctx);  // each takes away evidence the others would share
  } catch (const InfraError& e) {
    session.record_infra_error(e.what());
    report();
  }
  session.stop_backend();
}

json sandbox_summary(const json& result, const json& section) {
  const runner::CheckTally t = runner::tally_records(result["sandboxes"]);
  // The verdict is selftest's: weakened sandboxes are meant to fail their checks.
  return {{"sandboxes", result["sandboxes"].size()},
          {"checks", t.checks},
          {"pass", t.pass},
          {"fail", t.fail},
          {"na", t.na},
          {"errors", t.errors},
          {"verdict", section["summary"]["verdict"]}};
}

}  // namespace

std::string selftest_scenario(const std::string& scenarios_dir) {
  return scenarios_dir + "/selftest/hardened.yaml";
}

SelftestOutcome run_selftest(const SelftestConfig& config) {
  if (config.command.backend != scenario::BackendKind::local)
    throw UserError("selftest needs the local backend (it weakens the node it runs)");
  if (config.parallel < 1 || config.parallel > 32) throw UserError("--parallel must be between 1 and 32");
  if (config.runtimes.empty()) throw UserError("--runtimes names no runtime");
  for (const auto& r : config.runtimes)
    if (r != "runc" && r != "gvisor")
      throw UserError("--runtimes: unknown runtime '" + r + "' (runc, gvisor)");
  const auto weakenings = select(config.only, config.quick);
  const Planned p = plan(config, weakenings);
  const std::string bundle = runner::find_isoprobe_bundle(config.command.isoprobe_bundle);

  const auto started = Clock::now();
  runner::RunSession session({.command = config.command,
                              .profile = &p.profile,
                              .deployment_path = p.deployment_path,
                              .isoprobe_bundle = bundle});
  session.open_journal(header_of(p));
  int total = 0;
  for (const auto& j : p.jobs.jobs) total += j.attempts;
  for (const auto& j : p.jobs.alone) total += j.attempts;
  std::fprintf(stderr,
               "isoharness selftest %s: %zu weakening(s) x %zu runtime(s), %d sandbox(es), parallel %d\n",
               session.run_id().c_str(), weakenings.size(), config.runtimes.size(), total, config.parallel);

  session.settings().weaken = [](const runner::Job& job, deploy::SandboxRequest& request) {
    apply_weakenings(job.weakenings, request.values, request.test_weakenings);
  };
  if (config.agent == "lying")
    session.settings().forge_posture = [](const runner::Job& job, json& posture) {
      forge_clean_posture(posture, job.item->expect.get());
    };
  run_on_backend(p, config.parallel, session, progress(config, total));

  json result = session.collect();
  const std::string& infra_error = session.infra_error();
  result["parity"] = nullptr;
  JudgeInput in{weakenings, config.runtimes, p.jobs.not_applicable, &result["sandboxes"],
                config.disabled_checks};
  json section = judge(in);
  if (!infra_error.empty() || runner::g_interrupted) {
    section["summary"]["verdict"] = "error";
    section["summary"]["infrastructure_error"] = infra_error.empty() ? "interrupted" : infra_error;
  }
  section["quick"] = config.quick;
  section["parallel"] = config.parallel;
  section["scenario"] = p.scenario.scenario.name;
  section["duration_s"] = std::chrono::duration<double>(Clock::now() - started).count();
  result["selftest"] = section;
  result["summary"] = sandbox_summary(result, section);

  SelftestOutcome outcome;
  outcome.result_path = session.journal().finalise(result);
  outcome.reports = write_selftest_reports(result, config.command.out_dir);
  outcome.exit_code = exit_code_of(section);
  print_verdict(section, outcome.result_path);
  outcome.result = std::move(result);
  return outcome;
}

}  // namespace isoharness::selftest
