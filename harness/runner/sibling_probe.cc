#include "harness/runner/sibling_probe.h"

#include "harness/common/error.h"
#include "harness/common/subprocess.h"
#include "harness/verify/sibling_checks.h"

namespace isoharness::runner {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// An unusual argument, so nothing else in a sandbox looks like it.
constexpr const char* kMarkerSleep = "3599.25";

std::string str(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<std::string> strings(const json& list) {
  std::vector<std::string> out;
  if (list.is_array())
    for (const auto& s : list)
      if (s.is_string()) out.push_back(s.get<std::string>());
  return out;
}

// Runs isoprobe inside one `none` sibling through the runtime's exec (argv from the
// backend's facts, never from the sandbox) and judges what it saw.
std::vector<verify::CheckResult> probe_none_sibling(const json& facts, const json& sibling,
                                                    const std::vector<deploy::EgressTarget>& world_targets,
                                                    json& seen) {
  verify::NoneSiblingObservation o;
  o.service = str(sibling, "service");
  auto probe = verify::isolation_probe(facts, sibling, world_targets);
  o.asked = probe.names;
  std::vector<std::string> argv = strings(sibling.value("exec", json::array()));
  if (argv.empty() || str(sibling, "probe").empty()) {
    o.exec_detail = "the backend gave no exec command for service " + o.service;
    return verify::verify_none_sibling(o);
  }
  argv.insert(argv.end(), {str(sibling, "probe"), "posture", "--compact", "--deadline-ms", "20000",
                           "--egress-deadline-ms", "4000"});
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
  seen = {{"exec", argv}, {"answered", o.exec_answered}};
  if (o.posture.is_object())
    for (const auto& obs : o.posture.value("observations", json::array()))
      if (obs.is_object() && obs.value("name", "") == "egress") seen["egress"] = obs;
  return verify::verify_none_sibling(o);
}

}  // namespace

void add_sibling_targets(const json& facts, std::vector<std::string>& argv) {
  for (const auto& flag : verify::sibling_target_flags(facts.value("siblings", json::array()))) {
    argv.push_back("--target");
    argv.push_back(flag);
  }
}

void check_siblings(const json& planned_values, const json& facts, const json& agent_posture,
                    const std::vector<deploy::EgressTarget>& world_targets, json& record) {
  const json siblings = facts.value("siblings", json::array());
  for (const auto& c : verify::verify_siblings_from_agent(planned_values, siblings, agent_posture))
    record["checks"].push_back(verify::to_json(c));
  for (const auto& sibling : siblings) {
    if (!sibling.is_object()) continue;
    const std::string service = str(sibling, "service");
    // The plan's services (CONTRACTS §1 always has them); networkMode is written only when
    // the service pins one.
    const json& services = planned_values.at("services");
    if (!services.contains(service) || services[service].value("networkMode", "") != "none") continue;
    json seen;
    for (const auto& c : probe_none_sibling(facts, sibling, world_targets, seen))
      record["checks"].push_back(verify::to_json(c));
    record["siblings"][service] = seen;
  }
}

verify::CheckResult check_fresh_process(transport::SandboxSession& session, int attempt) {
  auto r = session.exec({"pgrep", "-a", "-f", std::string("^sleep ") + kMarkerSleep + "$"}, 20s, 4096);
  if (!r) throw InfraError("exec in sandbox failed: " + r.error().message);
  if (r->exit_code != 0 && r->exit_code != 1)
    throw InfraError("pgrep in the sandbox failed (exit " + std::to_string(r->exit_code) +
                     "): " + r->err.substr(0, 200));
  const bool stale = r->exit_code == 0;
  return verify::CheckResult{
      "fresh_process",
      stale ? "fail" : "pass",
      "no process from an earlier attempt",
      stale ? "running: " + r->out.substr(0, 200) : "no `sleep " + std::string(kMarkerSleep) + "` running",
      stale
          ? "fresh_process: a process started by an earlier attempt still runs — the sandbox was reused"
          : (attempt > 1 ? "the process left running by attempt " + std::to_string(attempt - 1) + " is absent"
                         : "first attempt: nothing from earlier runs"),
      "pgrep -a -f '^sleep " + std::string(kMarkerSleep) + "$' -> exit " + std::to_string(r->exit_code)};
}

void leave_process_marker(transport::SandboxSession& session) {
  // setsid -f detaches it; its stdio is closed so the session does not wait for it.
  auto r = session.exec(
      {"setsid", "-f", "sh", "-c", std::string("exec sleep ") + kMarkerSleep + " </dev/null >/dev/null 2>&1"},
      20s, 4096);
  if (!r || r->exit_code != 0)
    throw InfraError("starting the attempt's marker process failed: " +
                     (r ? r->err.substr(0, 200) : r.error().message));
  auto check = session.exec({"pgrep", "-f", std::string("^sleep ") + kMarkerSleep + "$"}, 20s, 4096);
  if (!check || check->exit_code != 0)
    throw InfraError("the attempt's marker process is not running after it was started");
}

verify::CheckResult check_fresh_dns(transport::SandboxSession& session, const json& facts,
                                    const std::string& previous_instance, int attempt, std::string* seen) {
  const json resolver = facts.value("item_resolver", json::object());
  const std::string name = str(resolver, "instance_name"), own = str(resolver, "instance");
  if (name.empty() || own.empty())
    return verify::CheckResult{"fresh_dns",
                               "n/a",
                               "this attempt's own resolver",
                               "the backend names none",
                               "the backend gives no per-attempt resolver instance to ask for",
                               ""};
  if (!resolver.value("agent_may_ask", true))
    return verify::CheckResult{"fresh_dns",
                               "n/a",
                               "this attempt's own resolver",
                               "no resolver reachable",
                               "the agent's service has networkMode none: it may ask no resolver",
                               ""};
  auto r = session.exec({"getent", "ahostsv4", name}, 20s, 4096);
  if (!r) throw InfraError("exec in sandbox failed: " + r.error().message);
  std::string got = r->exit_code == 0 ? r->out.substr(0, r->out.find_first_of(" \t\n")) : "";
  *seen = got;
  const bool stale = !previous_instance.empty() && got == previous_instance;
  const bool own_answer = got == own;
  std::string reason = attempt > 1 ? "attempt " + std::to_string(attempt - 1) + "'s answer (" +
                                         previous_instance + ") is gone: this attempt has its own resolver"
                                   : "first attempt: the sandbox's resolver is this attempt's own";
  if (stale)
    reason = "fresh_dns: the sandbox still gets the DNS answer of attempt " + std::to_string(attempt - 1) +
             " — its resolver or cache outlived the attempt";
  else if (!own_answer)
    reason = "fresh_dns: the sandbox's resolver is not this attempt's own (answered " +
             (got.empty() ? std::string("nothing") : got) + ", expected " + own + ")";
  return verify::CheckResult{
      "fresh_dns",
      !stale && own_answer ? "pass" : "fail",
      name + " -> " + own + " (this attempt's resolver)",
      got.empty() ? "no answer" : got,
      reason,
      "getent ahostsv4 " + name + " -> exit " + std::to_string(r->exit_code) + ": " + r->out.substr(0, 300)};
}

}  // namespace isoharness::runner
