#include "harness/runner/parity_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <random>
#include <set>

#include "harness/common/error.h"
#include "harness/parity/parity.h"
#include "harness/runner/bench_output.h"
#include "harness/runner/context.h"
#include "harness/runner/journal.h"
#include "harness/runner/live_sandbox.h"
#include "harness/runner/matrix.h"
#include "harness/deploy/factory/backend_factory.h"
#include "harness/runner/run_support.h"
#include "harness/verify/verify.h"
#include "reports/reports.h"

namespace isoharness::runner {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr const char* kSshRtt = "ssh_rtt";  // the interactive workload, timed by the harness
// The getpid cross-check: a static C loop (probes/getpid_static.c), run in the same cell
// and round as isoprobe's getpid workload, whenever getpid is timed. Weight 0.
constexpr const char* kGetpid = "getpid";
constexpr const char* kGetpidStatic = "getpid_static";
constexpr const char* kRemoteGetpidStatic = ".isoprobe/getpid-static";

// "<ns per call> <calls>" from getpid-static, as seconds per call.
std::optional<double> parse_getpid_static(const std::string& out) {
  double ns = 0;
  long calls = 0;
  if (std::sscanf(out.c_str(), "%lf %ld", &ns, &calls) != 2 || !(ns > 0) || calls <= 0) return std::nullopt;
  return ns * 1e-9;
}

// For every candidate cell that has both: isoprobe's getpid ratio, the static loop's, and
// how well they agree (isoprobe / static). Taken from the section's comparisons.
nlohmann::json getpid_crosscheck(const nlohmann::json& section) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& cell : section.value("cells", nlohmann::json::array())) {
    const nlohmann::json comparisons = cell.value("comparisons", nlohmann::json::array());
    const nlohmann::json* probe = nullptr;
    const nlohmann::json* loop = nullptr;
    for (const auto& c : comparisons) {
      if (c.value("workload", "") == kGetpid) probe = &c;
      if (c.value("workload", "") == kGetpidStatic) loop = &c;
    }
    if (!probe || !loop) continue;
    const double a = probe->value("ratio", nlohmann::json::object()).value("estimate", 0.0);
    const double b = loop->value("ratio", nlohmann::json::object()).value("estimate", 0.0);
    if (!(a > 0) || !(b > 0)) continue;
    out.push_back(
        {{"cell", cell.value("name", "")}, {"isoprobe_ratio", a}, {"static_ratio", b}, {"agreement", a / b}});
  }
  return out;
}

struct Cell {
  std::string key;      // name in the samples ("gvisor/tier"; an A/A twin gets "#2")
  std::string runtime;  // "runc" / "gvisor"
  std::string node_class;
  nlohmann::json item;  // plan item that applies
  std::unique_ptr<LiveSandbox> sandbox;
};

std::pair<std::string, std::string> split_cell(const std::string& cell) {
  auto slash = cell.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == cell.size())
    throw UserError("cell '" + cell + "' is not RUNTIME/NODE_CLASS (e.g. runc/tier, gvisor/non-tier)");
  return {cell.substr(0, slash), cell.substr(slash + 1)};
}

std::string join(const std::vector<std::string>& v, const char* sep = ",") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

RunOutcome run_parity(const ParityConfig& config) {
  // 1. Input: scenario, plan, cells. All of it is checked before anything is deployed.
  const std::string deployment_path =
      find_deployment(config.deployment_path, config.scenarios_dir, config.backend);
  auto profile = scenario::load_deployment(deployment_path);
  const std::string scenario_path =
      config.scenario_path.empty() ? config.scenarios_dir + "/parity/default.yaml" : config.scenario_path;
  auto planned = plan_scenarios({scenario_path}, profile, false);
  Planned& p = planned.front();
  const auto gvisor_classes = gvisor_runtime_classes(profile);
  if (!p.plan.contains("items") || p.plan["items"].empty())
    throw UserError(scenario_path + ": the scenario has no items");
  const std::string item_id = p.plan["items"][0].value("id", "");

  std::vector<std::string> cell_names = {config.baseline};
  if (config.candidates.empty()) {
    for (const auto& r : p.scenario.matrix.runtimes)
      for (const auto& n : p.scenario.matrix.node_classes)
        if (r + "/" + n != config.baseline) cell_names.push_back(r + "/" + n);
  } else {
    cell_names.insert(cell_names.end(), config.candidates.begin(), config.candidates.end());
  }
  std::vector<Cell> cells;
  std::set<std::string> keys;
  for (const auto& name : cell_names) {
    auto [runtime, node] = split_cell(name);
    if (std::find(profile.node_classes.begin(), profile.node_classes.end(), node) ==
        profile.node_classes.end())
      throw UserError("cell " + name + ": node class '" + node + "' is not in " + deployment_path);
    std::vector<Job> jobs;
    std::vector<Skipped> skipped;
    Planned one{p.scenario, p.plan, p.gvisor_plan};
    one.plan["items"] = nlohmann::json::array({p.plan["items"][0]});
    expand_jobs(p.scenario.name, one.plan, p.gvisor_plan, {runtime}, {node}, 1, gvisor_classes, jobs,
                skipped);
    if (jobs.empty())
      throw UserError("cell " + name + ": item " + item_id + " of " + scenario_path + " cannot run there: " +
                      (skipped.empty() ? std::string("unknown runtime") : skipped.front().reason));
    std::string key = name;
    while (keys.count(key)) key += "#2";  // an A/A twin: same configuration, its own sandbox
    keys.insert(key);
    cells.push_back(Cell{key, runtime, node, jobs.front().item, nullptr});
  }

  // The mix covers what is timed: the scenario's workloads with their weights, or the
  // --workloads selection, where a workload the scenario does not weigh counts 1.
  std::vector<std::string> workloads = config.workloads;
  std::map<std::string, double> weights;
  for (const auto& w : p.scenario.workloads)
    if (config.workloads.empty()) workloads.push_back(w.name);
  for (const auto& name : workloads) {
    auto it = std::find_if(p.scenario.workloads.begin(), p.scenario.workloads.end(),
                           [&](const auto& w) { return w.name == name; });
    weights[name] = it == p.scenario.workloads.end() ? 1.0 : it->weight;
  }
  if (workloads.empty())
    throw UserError(scenario_path + ": no workloads to time (add `workloads:` or pass --workloads)");
  const bool want_rtt = std::find(workloads.begin(), workloads.end(), kSshRtt) != workloads.end();
  const bool want_static = std::find(workloads.begin(), workloads.end(), kGetpid) != workloads.end();
  if (want_static) weights[kGetpidStatic] = 0;  // a cross-check, never part of the verdict
  std::vector<std::string> bench_workloads;
  for (const auto& w : workloads)
    if (w != kSshRtt) bench_workloads.push_back(w);
  const int rounds = config.rounds > 0 ? config.rounds : (config.quick ? 5 : 12);
  const std::string min_time = config.quick ? "0.02" : "0.05";

  // 2. Infrastructure.
  const std::string bundle = find_isoprobe_bundle(config.isoprobe_bundle);
  const std::string getpid_static = (std::filesystem::path(bundle).parent_path() / "getpid-static").string();
  if (want_static && !std::filesystem::exists(getpid_static))
    throw UserError("getpid is timed, but its cross-check " + getpid_static +
                    " is missing (it is built next to the isoprobe bundle)");
  const std::string run_id = random_run_id();
  SignalGuard signals;
  RunKey key(run_id);
  nlohmann::json context = run_context(config.backend, deployment_path);
  Journal journal(config.out_dir,
                  {{"schema", "isoharness.result/v1"},
                   {"context", context},
                   {"run", {{"id", run_id}, {"scenarios", {p.scenario.name}}, {"argv", config.argv}}},
                   {"plans", {{p.scenario.name, p.plan}}},
                   {"findings", nlohmann::json::array()},
                   {"skipped", nlohmann::json::array()}});

  JobContext ctx;
  ctx.use_key(run_id, key);
  ctx.journal = &journal;
  ctx.host_key_policy.accept_new = config.accept_new_host_keys;
  ctx.isoprobe_bundle = bundle;
  ctx.interrupted = &g_interrupted;

  parity::Samples samples;
  std::map<std::string, std::map<std::string, double>> not_ready;  // cell -> workload -> EAGAIN waits
  nlohmann::json skipped_workloads = nlohmann::json::object();
  nlohmann::json cells_json = nlohmann::json::array();
  nlohmann::json order_json = nlohmann::json::array();
  std::string infra_error;
  int rounds_done = 0;
  const auto started = Clock::now();
  nlohmann::json backend_context;
  {
    std::unique_ptr<deploy::Backend> backend;
    try {
      backend = deploy::make_backend(config.backend, profile,
                                     {run_id, config.out_dir, config.accept_new_host_keys, &g_interrupted});
      ctx.backend = backend.get();
      backend_context = backend->context();
      int seq = 0;
      for (auto& cell : cells) {
        Job job{p.scenario.name, cell.item, cell.runtime, cell.node_class, 1};
        cell.sandbox =
            std::make_unique<LiveSandbox>(ctx, make_request(job, 1, "p" + std::to_string(++seq), ctx));
        cell.sandbox->connect(45s);
        cell.sandbox->upload_isoprobe();
        if (want_static) {
          auto up = cell.sandbox->session().upload(getpid_static, kRemoteGetpidStatic, 0755, 30s);
          if (!up)
            throw InfraError("cell " + cell.key + ": uploading getpid-static failed: " + up.error().message);
        }
        cells_json.push_back({{"cell", cell.key},
                              {"runtime", cell.runtime},
                              {"node_class", cell.node_class},
                              {"item_id", cell.item.value("id", "")},
                              {"facts", cell.sandbox->handle().facts},
                              {"timings", cell.sandbox->timings()}});
        std::fprintf(stderr, "cell %-16s ready (%s)\n", cell.key.c_str(),
                     cell.sandbox->handle().facts.value("runtime_binary", cell.runtime).c_str());
      }

      auto bench_once = [&](Cell& cell) -> BenchRun {
        std::vector<std::string> argv = {kRemoteProbe,
                                         "bench",
                                         "--workloads",
                                         join(bench_workloads),
                                         "--min-time",
                                         min_time,
                                         "--benchmark_format=json"};
        auto r = cell.sandbox->session().exec(argv, 300s, 4 << 20);
        if (!r) throw InfraError("cell " + cell.key + ": isoprobe bench failed: " + r.error().message);
        if (r->timed_out) throw InfraError("cell " + cell.key + ": isoprobe bench passed its deadline");
        auto parsed = parse_bench_output(r->out);
        if (!parsed)
          throw InfraError("cell " + cell.key + ": " + parsed.error().message + " (exit " +
                           std::to_string(r->exit_code) + ": " + r->err.substr(0, 300) + ")");
        return std::move(parsed.value());
      };
      auto ssh_rtt = [&](Cell& cell) -> double {
        std::vector<double> t;
        for (int i = 0; i < 5; ++i) {
          auto s = Clock::now();
          auto r = cell.sandbox->session().exec({"true"}, 20s, 1024);
          if (!r || r->exit_code != 0) throw InfraError("cell " + cell.key + ": a command over SSH failed");
          t.push_back(std::chrono::duration<double>(Clock::now() - s).count());
        }
        return median(t);
      };

      auto static_loop = [&](Cell& cell) -> double {
        auto r = cell.sandbox->session().exec({kRemoteGetpidStatic, config.quick ? "50" : "100"}, 30s, 4096);
        if (!r || r->exit_code != 0)
          throw InfraError("cell " + cell.key + ": getpid-static failed" +
                           (r ? ": " + r->err.substr(0, 200) : ""));
        auto s = parse_getpid_static(r->out);
        if (!s)
          throw InfraError("cell " + cell.key + ": getpid-static printed '" + r->out.substr(0, 100) + "'");
        return *s;
      };

      // Warm-up: caches, page cache, lazy mappings; discarded.
      std::fprintf(stderr, "warm-up…\n");
      for (auto& cell : cells) {
        if (!bench_workloads.empty()) (void)bench_once(cell);
        if (want_rtt) (void)ssh_rtt(cell);
        if (want_static) (void)static_loop(cell);
      }

      std::mt19937 shuffle_rng(std::random_device{}());
      for (int round = 1; round <= rounds; ++round) {
        if (g_interrupted) break;
        if (Clock::now() - started > config.max_duration) {
          std::fprintf(stderr, "time budget of %llds spent: stopping after %d rounds\n",
                       static_cast<long long>(config.max_duration.count()), rounds_done);
          break;
        }
        std::vector<std::size_t> order(cells.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::shuffle(order.begin(), order.end(), shuffle_rng);
        nlohmann::json round_record = {
            {"round", round}, {"order", nlohmann::json::array()}, {"samples", nlohmann::json::object()}};
        for (std::size_t i : order) {
          Cell& cell = cells[i];
          round_record["order"].push_back(cell.key);
          if (!bench_workloads.empty()) {
            BenchRun run = bench_once(cell);
            for (const auto& [w, s] : run.seconds_per_op) {
              samples[cell.key][w].push_back(s);
              round_record["samples"][cell.key][w] = s;
            }
            for (const auto& [w, why] : run.skipped) skipped_workloads[cell.key][w] = why;
            for (const auto& [w, c] : run.counters) {
              round_record["counters"][cell.key][w] = c;
              if (auto n = c.find("not_ready"); n != c.end()) not_ready[cell.key][w] += n->second;
            }
          }
          if (want_rtt) {
            double s = ssh_rtt(cell);
            samples[cell.key][kSshRtt].push_back(s);
            round_record["samples"][cell.key][kSshRtt] = s;
          }
          if (want_static) {
            double s = static_loop(cell);
            samples[cell.key][kGetpidStatic].push_back(s);
            round_record["samples"][cell.key][kGetpidStatic] = s;
          }
        }
        journal.append("parity_round", round_record);
        order_json.push_back(round_record["order"]);
        ++rounds_done;
        std::fprintf(stderr, "round %d/%d done (%.0fs)\n", round, rounds,
                     std::chrono::duration<double>(Clock::now() - started).count());
      }
    } catch (const UserError&) {
      throw;
    } catch (const std::exception& e) {
      infra_error = e.what();
    }
    for (auto& cell : cells) cell.sandbox.reset();  // destroy sandboxes before the world
    ctx.close_jumps();
  }

  // 3. Statistics and the result.
  nlohmann::json result = result_from_journal(config.out_dir + "/journal.jsonl");
  for (auto& [k, v] : backend_context.items()) result["context"][k] = v;
  result["context"]["finished"] = utc_now();
  nlohmann::json section = nullptr;
  if (rounds_done > 0 && samples.count(cells.front().key)) {
    parity::SectionInput input;
    input.scenario = p.scenario.name;
    input.baseline = cells.front().key;
    input.tolerance = p.scenario.tolerance;
    input.weights = weights;
    input.samples = samples;
    section = parity::analyse(input);
    section["rounds"] = rounds_done;
    section["rounds_planned"] = rounds;
    section["order"] = order_json;
    section["cell_details"] = cells_json;
    section["skipped_workloads"] = skipped_workloads;
    section["quick"] = config.quick;
    section["duration_s"] = std::chrono::duration<double>(Clock::now() - started).count();
    section["getpid_crosscheck"] = getpid_crosscheck(section);
    // A blocking socket or pipe that answered EAGAIN is a quirk of the runtime the
    // workload waited out with poll(): the time stands, the reader should know.
    for (auto& c : section["cells"]) {
      for (const auto& key : {c.value("name", std::string()), cells.front().key}) {
        for (const auto& [w, n] : not_ready[key]) {
          if (n <= 0) continue;
          c["warnings"].push_back(
              fmt::format("{} under {}: a blocking descriptor answered EAGAIN {:.0f} times in {} rounds "
                          "(waited out with poll; "
                          "a quirk of the runtime, timed as it is)",
                          w, key, n, rounds_done));
        }
      }
    }
  }
  result["parity"] = section;
  std::string verdict = "error";
  if (!infra_error.empty() || g_interrupted || section.is_null()) {
    verdict = "error";
  } else {
    verdict = "pass";
    for (const auto& c : section.value("cells", nlohmann::json::array()))
      if (c.contains("mix") && c["mix"].value("verdict", "") == parity::kRegression) verdict = "fail";
  }
  result["summary"] = {
      {"verdict", verdict},
      {"rounds", rounds_done},
      {"infrastructure_error", infra_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(infra_error)},
      {"interrupted", g_interrupted.load()}};

  RunOutcome outcome;
  outcome.result_path = journal.finalise(result);
  outcome.reports = reports::write_all(result, config.out_dir);
  outcome.exit_code =
      verdict == "pass" ? kExitPass : (verdict == "fail" ? kExitVerdictFailed : kExitInfrastructure);
  if (!infra_error.empty()) std::fprintf(stderr, "infrastructure failure: %s\n", infra_error.c_str());
  if (!section.is_null()) {
    for (const auto& c : section.value("cells", nlohmann::json::array())) {
      const auto& mix = c.value("mix", nlohmann::json::object());
      const auto& slow = mix.value("slowdown", nlohmann::json::object());
      std::fprintf(stderr, "%-18s vs %-12s mix slowdown %.3f [%.3f, %.3f] → %s\n",
                   c.value("name", "").c_str(), cells.front().key.c_str(), slow.value("estimate", 0.0),
                   slow.value("low", 0.0), slow.value("high", 0.0), mix.value("verdict", "?").c_str());
    }
  }
  std::fprintf(stderr, "%s: %d rounds — result %s\n",
               verdict == "pass" ? "PARITY" : (verdict == "fail" ? "REGRESSION" : "ERROR"), rounds_done,
               outcome.result_path.c_str());
  outcome.result = std::move(result);
  return outcome;
}

}  // namespace isoharness::runner
