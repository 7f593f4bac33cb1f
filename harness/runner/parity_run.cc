#include "harness/runner/parity_run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <set>

#include "harness/common/error.h"
#include "harness/common/median.h"
#include "harness/common/verdict.h"
#include "harness/parity/parity.h"
#include "harness/parity/sequential.h"
#include "harness/runner/bench_output.h"
#include "harness/runner/context.h"
#include "harness/runner/journal.h"
#include "harness/runner/live_sandbox.h"
#include "harness/runner/matrix.h"
#include "harness/runner/node_view.h"
#include "harness/runner/parity_provenance.h"
#include "harness/runner/run_support.h"
#include "harness/runner/session.h"
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

// Test seam, never for measurements: ISOHARNESS_TEST_SLOW_SSH_RTT="CELL=SECONDS" makes
// ssh_rtt in that cell run `sleep SECONDS` instead of `true`, a real slowdown that the
// history system test needs. The section says so (test_slowdown), so such a run is never
// taken for a measurement.
struct TestSlowdown {
  std::string cell, seconds;
};
std::optional<TestSlowdown> test_slowdown() {
  const char* env = std::getenv("ISOHARNESS_TEST_SLOW_SSH_RTT");
  if (!env || !*env) return std::nullopt;
  const std::string text = env;
  const auto eq = text.rfind('=');
  char* end = nullptr;
  const double s = eq == std::string::npos ? 0 : std::strtod(text.c_str() + eq + 1, &end);
  if (eq == std::string::npos || eq == 0 || *end != '\0' || !(s > 0 && s <= 10))
    throw UserError("ISOHARNESS_TEST_SLOW_SSH_RTT: '" + text +
                    "' is not CELL=SECONDS with 0 < SECONDS <= 10");
  return TestSlowdown{text.substr(0, eq), text.substr(eq + 1)};
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
  PlanItemPtr item;  // plan item that applies
  Job job;           // what deploys the cell's sandbox (with the eval set a backend may submit)
  std::unique_ptr<LiveSandbox> sandbox;
};

std::pair<std::string, std::string> split_cell(const std::string& cell) {
  auto slash = cell.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == cell.size())
    throw UserError("cell '" + cell + "' is not RUNTIME/NODE_CLASS (e.g. runc/tier, gvisor/non-tier)");
  return {cell.substr(0, slash), cell.substr(slash + 1)};
}

// What is timed: the scenario's workloads with their weights, or the --workloads
// selection, where a workload the scenario does not weigh counts 1.
struct WorkloadMix {
  std::vector<std::string> bench;  // run by isoprobe bench
  std::map<std::string, double> weights;
  bool ssh_rtt = false;        // timed by the harness over SSH
  bool getpid_static = false;  // the getpid cross-check runs
  int rounds = 12;
  std::string min_time;
  std::optional<TestSlowdown> slowdown;  // test seam (see test_slowdown)
};

// Phase 1: everything checked before anything is deployed.
struct ParityInput {
  std::string baseline;  // the baseline cell's key (the first planned cell)
  std::string deployment_path;
  std::string scenario_path;
  scenario::DeploymentProfile profile;
  std::optional<Planned> planned;
  std::vector<Cell> cells;
  WorkloadMix mix;
  std::string getpid_static_path;
};

// What the rounds measured.
struct Measurements {
  parity::Samples samples;
  std::map<std::string, std::map<std::string, double>> not_ready;  // cell -> workload -> EAGAIN waits
  nlohmann::json skipped_workloads = nlohmann::json::object();
  nlohmann::json cells_json = nlohmann::json::array();
  nlohmann::json order_json = nlohmann::json::array();
  nlohmann::json not_deployed = nlohmann::json::array();  // [{cell, error}]
  bool baseline_missing = false;
  std::string infra_error;
  int rounds_done = 0;
  // --until-decided: the looks planned, and per decided cell the look that decided it.
  std::vector<parity::Look> looks;
  std::map<std::string, nlohmann::json> decided;  // cell -> {rounds, confidence, mix}
};

std::vector<Cell> plan_cells(const ParityConfig& config, const ParityInput& in) {
  const Planned& p = *in.planned;
  const PlanItemPtr& item = p.items.front();  // prepare() refused a scenario without items
  std::vector<std::string> names = {config.baseline};
  if (config.candidates.empty()) {
    for (const auto& r : p.scenario.matrix.runtimes)
      for (const auto& n : p.scenario.matrix.node_classes)
        if (r + "/" + n != config.baseline) names.push_back(r + "/" + n);
  } else {
    names.insert(names.end(), config.candidates.begin(), config.candidates.end());
  }
  if (config.aa && std::find(names.begin() + 1, names.end(), config.baseline) == names.end())
    names.push_back(config.baseline);  // its twin: the night's A/A noise
  const auto gvisor_classes = gvisor_runtime_classes(in.profile);
  std::vector<Cell> cells;
  std::set<std::string> keys;
  for (const auto& name : names) {
    auto [runtime, node] = split_cell(name);
    const auto& classes = in.profile.node_classes;
    if (std::find(classes.begin(), classes.end(), node) == classes.end())
      throw UserError("cell " + name + ": node class '" + node + "' is not in " + in.deployment_path);
    std::vector<Job> jobs;
    std::vector<Skipped> skipped;
    expand_planned_jobs(p, {item}, {runtime}, {node}, 1, gvisor_classes, jobs, skipped);
    if (jobs.empty())
      throw UserError("cell " + name + ": item " + item->id + " of " + in.scenario_path +
                      " cannot run there: " +
                      (skipped.empty() ? std::string("unknown runtime") : skipped.front().reason));
    std::string key = name;
    while (keys.count(key)) key += "#2";  // an A/A twin: same configuration, its own sandbox
    keys.insert(key);
    cells.push_back(Cell{key, runtime, node, jobs.front().item, jobs.front(), nullptr});
  }
  return cells;
}

WorkloadMix choose_workloads(const ParityConfig& config, const scenario::Scenario& sc,
                             const std::string& scenario_path) {
  std::vector<std::string> workloads = config.workloads;
  if (config.workloads.empty())
    for (const auto& w : sc.workloads) workloads.push_back(w.name);
  if (workloads.empty())
    throw UserError(scenario_path + ": no workloads to time (add `workloads:` or pass --workloads)");
  WorkloadMix mix;
  for (const auto& name : workloads) {
    auto it =
        std::find_if(sc.workloads.begin(), sc.workloads.end(), [&](const auto& w) { return w.name == name; });
    mix.weights[name] = it == sc.workloads.end() ? 1.0 : it->weight;
    if (name == kSshRtt)
      mix.ssh_rtt = true;
    else
      mix.bench.push_back(name);
    if (name == kGetpid) mix.getpid_static = true;
  }
  if (mix.getpid_static) mix.weights[kGetpidStatic] = 0;  // a cross-check, never part of the verdict
  mix.rounds = config.rounds > 0 ? config.rounds : config.until_decided ? 24 : (config.quick ? 5 : 12);
  mix.min_time = config.quick ? "0.02" : "0.05";
  mix.slowdown = test_slowdown();
  return mix;
}

ParityInput prepare(const ParityConfig& config) {
  ParityInput in;
  in.deployment_path =
      find_deployment(config.command.deployment_path, config.command.scenarios_dir, config.command.backend);
  in.profile = scenario::load_deployment(in.deployment_path);
  in.scenario_path = config.scenario_path.empty() ? config.command.scenarios_dir + "/parity/default.yaml"
                                                  : config.scenario_path;
  in.planned = std::move(plan_scenarios({in.scenario_path}, in.profile, false).front());
  if (in.planned->items.empty()) throw UserError(in.scenario_path + ": the scenario has no items");
  in.cells = plan_cells(config, in);
  in.baseline = in.cells.front().key;
  in.mix = choose_workloads(config, in.planned->scenario, in.scenario_path);
  return in;
}

// The three ways a cell is timed, each one sample per call.
class CellTimer {
 public:
  CellTimer(const WorkloadMix& mix, bool quick) : mix_(mix), quick_(quick) {}

  BenchRun bench(Cell& cell) const {
    const std::vector<std::string> argv = {kRemoteProbe,
                                           "bench",
                                           "--workloads",
                                           fmt::format("{}", fmt::join(mix_.bench, ",")),
                                           "--min-time",
                                           mix_.min_time,
                                           "--benchmark_format=json"};
    auto r = cell.sandbox->session().exec(argv, 300s, 4 << 20);
    if (!r) throw InfraError("cell " + cell.key + ": isoprobe bench failed: " + r.error().message);
    if (r->timed_out) throw InfraError("cell " + cell.key + ": isoprobe bench passed its deadline");
    auto parsed = parse_bench_output(r->out);
    if (!parsed)
      throw InfraError("cell " + cell.key + ": " + parsed.error().message + " (exit " +
                       std::to_string(r->exit_code) + ": " + r->err.substr(0, 300) + ")");
    return std::move(parsed.value());
  }

  // The median of five tiny commands over SSH through the jumphost.
  double ssh_rtt(Cell& cell) const {
    std::vector<double> t;
    const std::vector<std::string> command = mix_.slowdown && mix_.slowdown->cell == cell.key
                                                 ? std::vector<std::string>{"sleep", mix_.slowdown->seconds}
                                                 : std::vector<std::string>{"true"};
    for (int i = 0; i < 5; ++i) {
      auto s = Clock::now();
      auto r = cell.sandbox->session().exec(command, 20s, 1024);
      if (!r || r->exit_code != 0) throw InfraError("cell " + cell.key + ": a command over SSH failed");
      t.push_back(std::chrono::duration<double>(Clock::now() - s).count());
    }
    return median(t);
  }

  double static_loop(Cell& cell) const {
    auto r = cell.sandbox->session().exec({kRemoteGetpidStatic, quick_ ? "50" : "100"}, 30s, 4096);
    if (!r || r->exit_code != 0)
      throw InfraError("cell " + cell.key + ": getpid-static failed" +
                       (r ? ": " + r->err.substr(0, 200) : ""));
    auto s = parse_getpid_static(r->out);
    if (!s) throw InfraError("cell " + cell.key + ": getpid-static printed '" + r->out.substr(0, 100) + "'");
    return *s;
  }

 private:
  const WorkloadMix& mix_;
  bool quick_;
};

// One cell's sandbox: deployed, reached, isoprobe (and getpid-static) uploaded, and what
// it sees of its node read. Throws what the backend or the sandbox said.
void deploy_cell(const ParityInput& in, Cell& cell, const JobContext& ctx, int seq, Measurements& m) {
  cell.sandbox =
      std::make_unique<LiveSandbox>(ctx, make_request(cell.job, 1, "p" + std::to_string(seq), ctx.settings));
  cell.sandbox->connect(45s);
  cell.sandbox->upload_isoprobe();
  if (in.mix.getpid_static) {
    auto up = cell.sandbox->session().upload(in.getpid_static_path, kRemoteGetpidStatic, 0755, 30s);
    if (!up) throw InfraError("uploading getpid-static failed: " + up.error().message);
  }
  nlohmann::json node = read_node_view(cell.sandbox->session());
  const auto& facts = cell.sandbox->handle().facts;
  node["node_name"] = facts.node_name.empty() ? nlohmann::json(nullptr) : nlohmann::json(facts.node_name);
  m.cells_json.push_back({{"cell", cell.key},
                          {"runtime", cell.runtime},
                          {"node_class", cell.node_class},
                          {"item_id", cell.item->id},
                          {"facts", facts.to_json()},
                          {"node", node},
                          {"timings", cell.sandbox->timings()}});
  std::fprintf(stderr, "cell %-16s ready (%s; boot_id %s, cpus %s)\n", cell.key.c_str(),
               !facts.runtime_binary.empty() ? facts.runtime_binary.c_str()
               : facts.backend               ? std::string(scenario::backend_name(*facts.backend)).c_str()
                                             : cell.runtime.c_str(),
               node["boot_id"].is_string() ? node["boot_id"].get<std::string>().substr(0, 8).c_str() : "?",
               node["cpus_allowed"].is_string() ? node["cpus_allowed"].get<std::string>().c_str() : "?");
}

// Phase 2: one sandbox per cell. A cell that cannot be deployed is named with what the
// platform said, loudly, and leaves the run: nothing is compared against it, and without
// the baseline nothing is timed at all. The run is then an infrastructure failure.
void deploy_cells(ParityInput& in, const JobContext& ctx, Measurements& m) {
  int seq = 0;
  std::vector<Cell> deployed;
  std::vector<std::string> failures;
  for (auto& cell : in.cells) {
    if (g_interrupted) throw InfraError("interrupted while deploying the cells");
    try {
      deploy_cell(in, cell, ctx, ++seq, m);
      deployed.push_back(std::move(cell));
    } catch (const UserError&) {
      throw;
    } catch (const std::exception& e) {
      cell.sandbox.reset();
      std::fprintf(stderr, "cell %-16s NOT DEPLOYED: %s\n", cell.key.c_str(), e.what());
      m.not_deployed.push_back({{"cell", cell.key}, {"error", e.what()}});
      failures.push_back("cell " + cell.key + " could not be deployed: " + e.what());
      if (cell.key == in.baseline) m.baseline_missing = true;
    }
  }
  in.cells = std::move(deployed);
  if (failures.empty()) return;
  m.infra_error = fmt::format("{}", fmt::join(failures, "\n"));
  if (m.baseline_missing) m.infra_error += "\nthe baseline cell is missing: no cell was timed";
}

// One cell's turn in a round: every sample it gives, into the samples and the round's record.
void time_cell(const CellTimer& timer, const WorkloadMix& mix, Cell& cell, Measurements& m,
               nlohmann::json& record) {
  auto keep = [&](const std::string& workload, double seconds) {
    m.samples[cell.key][workload].push_back(seconds);
    record["samples"][cell.key][workload] = seconds;
  };
  if (!mix.bench.empty()) {
    BenchRun run = timer.bench(cell);
    for (const auto& [w, s] : run.seconds_per_op) keep(w, s);
    for (const auto& [w, why] : run.skipped) m.skipped_workloads[cell.key][w] = why;
    for (const auto& [w, c] : run.counters) {
      record["counters"][cell.key][w] = c;
      if (auto n = c.find("not_ready"); n != c.end()) m.not_ready[cell.key][w] += n->second;
    }
  }
  if (mix.ssh_rtt) keep(kSshRtt, timer.ssh_rtt(cell));
  if (mix.getpid_static) keep(kGetpidStatic, timer.static_loop(cell));
}

// One cell's mix at a look: the baseline's and the cell's samples so far, judged at the
// look's confidence.
nlohmann::json mix_at_look(const ParityInput& in, const Measurements& m, const std::string& cell,
                           double confidence) {
  parity::SectionInput input;
  input.scenario = in.planned->scenario.name;
  input.baseline = in.baseline;
  input.tolerance = in.planned->scenario.tolerance;
  input.weights = in.mix.weights;
  input.samples[in.baseline] = m.samples.at(in.baseline);
  input.samples[cell] =
      m.samples.count(cell) ? m.samples.at(cell) : std::map<std::string, std::vector<double>>{};
  input.mix.confidence = confidence;
  const nlohmann::json section = parity::analyse(input);
  return section["cells"].empty() ? nlohmann::json() : section["cells"][0]["mix"];
}

// --until-decided: at a planned look, every undecided cell judged at the look's spent
// confidence; a decided one stops being timed. True when every cell is decided.
bool look_and_stop(const ParityInput& in, Measurements& m) {
  const auto look = std::find_if(m.looks.begin(), m.looks.end(),
                                 [&](const parity::Look& l) { return l.rounds == m.rounds_done; });
  if (look == m.looks.end() || !m.samples.count(in.baseline)) return false;
  bool all = true;
  for (const auto& cell : in.cells) {
    if (cell.key == in.baseline || m.decided.count(cell.key)) continue;
    const nlohmann::json mix = mix_at_look(in, m, cell.key, look->confidence);
    const std::string verdict = mix.is_object() ? mix.value("verdict", "") : "";
    const bool decided = verdict == parity::kParity || verdict == parity::kRegression ||
                         verdict == parity::kFaster || verdict == parity::kNoMix;
    if (decided) {
      m.decided[cell.key] = {{"rounds", m.rounds_done}, {"confidence", look->confidence}, {"mix", mix}};
      std::fprintf(stderr, "cell %-16s decided after %d rounds: %s (at %.4f)\n", cell.key.c_str(),
                   m.rounds_done, verdict.c_str(), look->confidence);
    }
    all = all && decided;
  }
  return all;
}

// Phase 3: a discarded warm-up pass, then rounds in a fresh random order of cells each.
void measure(const ParityConfig& config, ParityInput& in, Journal& journal, Measurements& m,
             Clock::time_point started) {
  const CellTimer timer(in.mix, config.quick);
  std::fprintf(stderr, "warm-up…\n");
  for (auto& cell : in.cells) {
    if (!in.mix.bench.empty()) (void)timer.bench(cell);
    if (in.mix.ssh_rtt) (void)timer.ssh_rtt(cell);
    if (in.mix.getpid_static) (void)timer.static_loop(cell);
  }
  std::mt19937 shuffle_rng(std::random_device{}());
  if (config.until_decided) m.looks = parity::spending_schedule(config.batch, in.mix.rounds, 0.95);
  for (int round = 1; round <= in.mix.rounds; ++round) {
    if (g_interrupted) break;
    if (Clock::now() - started > config.max_duration) {
      std::fprintf(stderr, "time budget of %llds spent: stopping after %d rounds\n",
                   static_cast<long long>(config.max_duration.count()), m.rounds_done);
      break;
    }
    std::vector<std::size_t> order(in.cells.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), shuffle_rng);
    nlohmann::json record = {
        {"round", round}, {"order", nlohmann::json::array()}, {"samples", nlohmann::json::object()}};
    for (std::size_t i : order) {
      if (m.decided.count(in.cells[i].key)) continue;  // decided at an earlier look
      record["order"].push_back(in.cells[i].key);
      time_cell(timer, in.mix, in.cells[i], m, record);
    }
    journal.append("parity_round", record);
    m.order_json.push_back(record["order"]);
    ++m.rounds_done;
    std::fprintf(stderr, "round %d/%d done (%.0fs)\n", round, in.mix.rounds,
                 std::chrono::duration<double>(Clock::now() - started).count());
    if (config.until_decided && look_and_stop(in, m)) break;
  }
}

// Phases 2 and 3 with the backend up; every sandbox is gone when this returns. An
// infrastructure failure is recorded, never thrown: what was measured still counts.
void deploy_and_measure(const ParityConfig& config, ParityInput& in, RunSession& session, Measurements& m,
                        Clock::time_point started) {
  if (!session.start_backend()) {
    m.infra_error = session.infra_error();
    return;
  }
  try {
    deploy_cells(in, session.jobs(), m);
    if (!m.baseline_missing) measure(config, in, session.journal(), m, started);
  } catch (const UserError&) {
    throw;
  } catch (const std::exception& e) {
    m.infra_error += (m.infra_error.empty() ? "" : "\n") + std::string(e.what());
  }
  for (auto& cell : in.cells) cell.sandbox.reset();  // destroy sandboxes before the world
  session.stop_backend();
}

// A blocking socket or pipe that answered EAGAIN is a quirk of the runtime the workload
// waited out with poll(): the time stands, the reader should know.
void warn_not_ready(nlohmann::json& section, const std::string& baseline, const Measurements& m) {
  for (auto& c : section["cells"]) {
    for (const auto& key : {c.value("name", std::string()), baseline}) {
      auto cell = m.not_ready.find(key);
      if (cell == m.not_ready.end()) continue;
      for (const auto& [w, n] : cell->second) {
        if (n <= 0) continue;
        c["warnings"].push_back(
            fmt::format("{} under {}: a blocking descriptor answered EAGAIN {:.0f} times in {} rounds "
                        "(waited out with poll; a quirk of the runtime, timed as it is)",
                        w, key, n, m.rounds_done));
      }
    }
  }
}

// --until-decided: each cell's verdict is the one of the look that decided it; a cell
// never decided keeps "inconclusive" (judged at the last look's confidence), whatever a
// later unplanned look would say, so the error rate stays the one spent.
void apply_sequential(nlohmann::json& section, const ParityInput& in, const Measurements& m) {
  nlohmann::json looks = nlohmann::json::array();
  for (const auto& l : m.looks)
    looks.push_back({{"rounds", l.rounds}, {"alpha", l.alpha}, {"confidence", l.confidence}});
  nlohmann::json cells = nlohmann::json::object();
  for (auto& c : section["cells"]) {
    const std::string name = c.value("name", "");
    const auto d = m.decided.find(name);
    if (d != m.decided.end()) {
      c["mix"] = d->second["mix"];
      cells[name] = {
          {"rounds", d->second["rounds"]}, {"decided", true}, {"confidence", d->second["confidence"]}};
    } else {
      const double conf = m.looks.empty() ? 0.95 : m.looks.back().confidence;
      c["mix"] = mix_at_look(in, m, name, conf);
      if (c["mix"].is_object() && c["mix"].value("verdict", "") != parity::kNoMix)
        c["mix"]["verdict"] = parity::kInconclusive;
      cells[name] = {{"rounds", m.rounds_done}, {"decided", false}, {"confidence", conf}};
    }
    cells[name]["verdict"] = c["mix"].is_object() ? c["mix"].value("verdict", "") : "";
  }
  section["sequential"] = {{"spending", parity::to_string(parity::Spending::kPocock)},
                           {"batch", m.looks.empty() ? 0 : m.looks.front().rounds},
                           {"max_rounds", in.mix.rounds},
                           {"overall_confidence", 0.95},
                           {"looks", looks},
                           {"cells", cells}};
}

// Phase 4: the statistics, or null when nothing was measured for the baseline.
nlohmann::json analyse(const ParityConfig& config, const ParityInput& in, const Measurements& m,
                       Clock::time_point started) {
  const std::string& baseline = in.baseline;
  if (m.rounds_done == 0 || !m.samples.count(baseline)) return nullptr;
  parity::SectionInput input;
  input.scenario = in.planned->scenario.name;
  input.baseline = baseline;
  input.tolerance = in.planned->scenario.tolerance;
  input.weights = in.mix.weights;
  input.samples = m.samples;
  nlohmann::json section = parity::analyse(input);
  section["rounds"] = m.rounds_done;
  section["rounds_planned"] = in.mix.rounds;
  section["order"] = m.order_json;
  section["cell_details"] = m.cells_json;
  section["cells_not_deployed"] = m.not_deployed;
  section["skipped_workloads"] = m.skipped_workloads;
  section["quick"] = config.quick;
  if (config.until_decided) apply_sequential(section, in, m);
  section["duration_s"] = std::chrono::duration<double>(Clock::now() - started).count();
  section["getpid_crosscheck"] = getpid_crosscheck(section);
  if (in.mix.slowdown)
    section["test_slowdown"] = {
        {"cell", in.mix.slowdown->cell}, {"workload", kSshRtt}, {"sleep_s", in.mix.slowdown->seconds}};
  warn_not_ready(section, baseline, m);
  return section;
}

Verdict parity_verdict(const nlohmann::json& section, const Measurements& m) {
  bool regression = false;
  if (!section.is_null())
    for (const auto& c : section.value("cells", nlohmann::json::array()))
      regression = regression || (c.contains("mix") && c["mix"].value("verdict", "") == parity::kRegression);
  return verdict_from(!m.infra_error.empty() || g_interrupted || section.is_null(), regression);
}

// The summary line's word, by verdict: PARITY, REGRESSION or ERROR.
const char* parity_word(Verdict v) {
  static constexpr std::array<const char*, 3> kWords{"PARITY", "REGRESSION", "ERROR"};
  return kWords.at(static_cast<std::size_t>(v));
}

// ", decided after 4 rounds" / ", undecided after 24 rounds" for a --until-decided run.
std::string sequential_note(const nlohmann::json& section, const std::string& cell) {
  const auto seq = section.value("sequential", nlohmann::json::object());
  const auto cells = seq.is_object() ? seq.value("cells", nlohmann::json::object()) : nlohmann::json();
  if (!cells.is_object() || !cells.contains(cell) || !cells[cell].is_object()) return "";
  const auto& c = cells[cell];
  return fmt::format(", {} after {} rounds", c.value("decided", false) ? "decided" : "undecided",
                     c.value("rounds", 0));
}

// The one-line mix of every cell (its interval's confidence: a sequential look's share
// where one decided it), then the verdict.
void print_summary(const nlohmann::json& section, const std::string& baseline, Verdict verdict,
                   const Measurements& m, const std::string& result_path) {
  if (!m.infra_error.empty()) std::fprintf(stderr, "infrastructure failure: %s\n", m.infra_error.c_str());
  if (!section.is_null()) {
    for (const auto& c : section.value("cells", nlohmann::json::array())) {
      const auto& mix = c.value("mix", nlohmann::json::object());
      if (mix.value("verdict", "") == parity::kNoMix) {
        std::fprintf(stderr, "%-18s vs %-12s no weighted mix: every timed workload weighs 0\n",
                     c.value("name", "").c_str(), baseline.c_str());
        continue;
      }
      const auto& slow = mix.value("slowdown", nlohmann::json::object());
      const double conf = mix.value("confidence", section.value("confidence", 0.95));
      std::fprintf(stderr, "%-18s vs %-12s mix slowdown %.3f [%.3f, %.3f] (%.3g %%) → %s%s\n",
                   c.value("name", "").c_str(), baseline.c_str(), slow.value("estimate", 0.0),
                   slow.value("low", 0.0), slow.value("high", 0.0), conf * 100,
                   mix.value("verdict", "?").c_str(), sequential_note(section, c.value("name", "")).c_str());
    }
  }
  std::fprintf(stderr, "%s: %d rounds — result %s\n", parity_word(verdict), m.rounds_done,
               result_path.c_str());
}

// What the history keeps of where the cells ran: the profile's name, each node class as
// the profile asks for it (local: its CPU set and neighbour; hawk: the placement labels and
// tolerations; never the CLI's environment), and the kernel each cell's sandbox reports
// (/proc/version: the host's under runc, gVisor's own under gVisor).
void add_cell_context(nlohmann::json& context, const ParityInput& in, const Measurements& m) {
  context["profile"] = in.profile.name;
  nlohmann::json classes = nlohmann::json::object();
  const nlohmann::json all = in.profile.raw.value("node_classes", nlohmann::json::object());
  for (const auto& [name, settings] : all.items()) {
    nlohmann::json c = settings.is_object() ? settings : nlohmann::json::object();
    c.erase("env");
    c.erase("config_overrides");
    classes[name] = c;
  }
  context["node_classes"] = classes;
  nlohmann::json kernels = nlohmann::json::object();
  for (const auto& c : m.cells_json)
    kernels[c.value("cell", "")] =
        c.value("node", nlohmann::json::object()).value("kernel", nlohmann::json());
  context["sandbox_kernels"] = kernels;
}

}  // namespace

RunOutcome run_parity(const ParityConfig& config) {
  ParityInput in = prepare(config);
  const Planned& p = *in.planned;
  const std::string bundle = find_isoprobe_bundle(config.command.isoprobe_bundle);
  in.getpid_static_path = (std::filesystem::path(bundle).parent_path() / "getpid-static").string();
  if (in.mix.getpid_static && !std::filesystem::exists(in.getpid_static_path))
    throw UserError("getpid is timed, but its cross-check " + in.getpid_static_path +
                    " is missing (it is built next to the isoprobe bundle)");

  RunSession session({.command = config.command,
                      .profile = &in.profile,
                      .deployment_path = in.deployment_path,
                      .isoprobe_bundle = bundle});
  HeaderParts header;
  header.scenario_names = {p.scenario.name};
  header.plans[p.scenario.name] = policy::to_json(p.plan);
  session.open_journal(header);

  Measurements m;
  const auto started = Clock::now();
  deploy_and_measure(config, in, session, m, started);

  nlohmann::json result = session.collect();
  // A journal that had to leave --out (a full disk) makes the run an infrastructure failure.
  if (m.infra_error.empty()) m.infra_error = session.infra_error();
  add_cell_context(result["context"], in, m);
  result["parity"] = analyse(config, in, m, started);
  if (result["parity"].is_object())
    result["parity"]["provenance"] =
        parity_provenance(in.profile, config.command.backend, m.cells_json, result["context"]);
  const Verdict verdict = parity_verdict(result["parity"], m);
  result["summary"] = {{"verdict", verdict_label(verdict)},
                       {"rounds", m.rounds_done},
                       {"infrastructure_error",
                        m.infra_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.infra_error)},
                       {"interrupted", g_interrupted.load()},
                       {"cells_not_deployed", m.not_deployed}};

  RunOutcome outcome;
  outcome.result_path = session.journal().finalise(result);
  outcome.reports = reports::write_all(result, config.command.out_dir, report_inputs(config.command, result));
  outcome.exit_code = verdict_exit_code(verdict);
  print_summary(result["parity"], in.baseline, verdict, m, outcome.result_path);
  outcome.result = std::move(result);
  return outcome;
}

}  // namespace isoharness::runner
