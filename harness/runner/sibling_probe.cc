#include "harness/runner/sibling_probe.h"

#include <future>

#include "harness/common/error.h"
#include "harness/common/json_read.h"
#include "harness/common/subprocess.h"
#include "harness/policy/chart_values.h"
#include "harness/verify/sibling_checks.h"

namespace isoharness::runner {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// Runs isoprobe inside one `none` sibling through the runtime's exec (argv from the
// backend's facts, never from the sandbox) and judges what it saw.
std::vector<verify::CheckResult> probe_none_sibling(const deploy::SandboxFacts& facts,
                                                    const deploy::SandboxFacts& sibling,
                                                    const std::vector<deploy::EgressTarget>& world_targets,
                                                    std::chrono::milliseconds egress_deadline,
                                                    std::optional<NoneSiblingSeen>& seen) {
  verify::NoneSiblingObservation o;
  o.service = sibling.service;
  // n/a only for a sibling the backend knows by name alone (seen_in says where); one it
  // deployed itself but gives no way into is judged, and fails: the exec did not answer.
  if (sibling.exec.empty() && !sibling.seen_in.empty())
    return {verify::none_sibling_not_entered(
        o.service, "the backend (" + sibling.seen_in + ") offers no way into a service")};
  auto probe = verify::isolation_probe(facts, sibling, world_targets);
  o.asked = probe.names;
  std::vector<std::string> argv = sibling.exec;
  if (argv.empty() || sibling.probe.empty()) {
    o.exec_detail = "the backend gave no exec command or isoprobe path for service " + o.service;
    return verify::verify_none_sibling(o);
  }
  argv.insert(argv.end(), {sibling.probe, "posture", "--compact", "--deadline-ms", "20000",
                           "--egress-deadline-ms", std::to_string(egress_deadline.count())});
  argv.insert(argv.end(), probe.args.begin(), probe.args.end());
  RunOptions opts;
  opts.deadline = 60s;
  opts.max_output = 8 << 20;
  auto r = run_command(argv, opts);
  o.exec_detail = render_argv(argv) + "\n";
  if (!r) {
    o.exec_detail += "could not start: " + r.error().message;
  } else {
    o.exec_detail += r->describe() + "\n" + r->err.substr(0, 1000);
    o.posture = json::parse(r->out, nullptr, false);
    o.exec_answered = r->ok() && o.posture.is_object();
    if (!o.exec_answered) o.posture = nullptr;
  }
  seen = NoneSiblingSeen{argv, o.exec_answered, nullptr};
  if (o.posture.is_object())
    for (const auto& obs : o.posture.value("observations", json::array()))
      if (common::json_string(obs, "name") == "egress") seen->egress = obs;
  return verify::verify_none_sibling(o);
}

}  // namespace

void add_sibling_targets(const deploy::SandboxFacts& facts, std::vector<std::string>& argv) {
  for (const auto& flag : verify::sibling_target_flags(facts.sibling_list())) {
    argv.push_back("--target");
    argv.push_back(flag);
  }
}

NoneSiblingProbes::NoneSiblingProbes(const json& planned_values, const deploy::SandboxFacts& facts,
                                     const std::vector<deploy::EgressTarget>& world_targets,
                                     std::chrono::milliseconds egress_deadline) {
  // The plan's services (CONTRACTS §1 always has them); networkIsolated marks a `none` one.
  const json& services = planned_values.at("services");
  for (const auto& sibling : facts.sibling_list()) {
    const std::string& service = sibling.service;
    if (!services.contains(service) || !policy::service_network_isolated(services[service])) continue;
    running_.emplace_back(
        service, std::async(std::launch::async, [facts, sibling, world_targets, egress_deadline] {
          Outcome out;
          out.checks = probe_none_sibling(facts, sibling, world_targets, egress_deadline, out.seen);
          return out;
        }));
  }
}

NoneSiblingProbes::~NoneSiblingProbes() {
  for (auto& [service, outcome] : running_)
    if (outcome.valid()) outcome.wait();  // each is bounded by its exec's deadline
}

void NoneSiblingProbes::collect(SiblingRecord& into) {
  for (auto& [service, outcome] : running_) {
    if (!outcome.valid()) continue;
    Outcome out = outcome.get();
    into.checks.insert(into.checks.end(), out.checks.begin(), out.checks.end());
    into.none_siblings[service] = std::move(out.seen);
  }
}

SiblingRecord check_siblings(const json& planned_values, const deploy::SandboxFacts& facts,
                             const json& agent_posture, NoneSiblingProbes& none_siblings) {
  SiblingRecord out;
  out.checks = verify::verify_siblings_from_agent(planned_values, facts.sibling_list(), agent_posture);
  none_siblings.collect(out);
  return out;
}

}  // namespace isoharness::runner
