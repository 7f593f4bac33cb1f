#include "harness/runner/refusal.h"

#include <chrono>

#include "harness/policy/plan.h"

namespace isoharness::runner {
namespace {

using Clock = std::chrono::steady_clock;

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : "; ") + l;
  return out;
}

// The verdict on what the platform (or the planner) did with the config.
verify::CheckResult judge(const scenario::Scenario& s, const deploy::RefusalProbe& probe) {
  const std::string expected =
      "refused with an Error: message" +
      (s.refusal_reason.empty() ? "" : " naming '" + s.refusal_reason + "'") +
      (s.refusal_or_never_running ? ", or accepted with no sandbox ever Running" : "");
  auto result = [&](bool pass, std::string observed, std::string reason) {
    return verify::CheckResult{"fail_loudly",       pass ? "pass" : "fail", expected,
                               std::move(observed), std::move(reason),      probe.detail.substr(0, 4096)};
  };
  if (probe.refused) {
    if (probe.message.find("Error:") == std::string::npos)
      return result(false, probe.message,
                    "fail_loudly: refused, but without an Error: message: " + probe.message);
    if (!s.refusal_reason.empty() && probe.message.find(s.refusal_reason) == std::string::npos)
      return result(false, probe.message,
                    "fail_loudly: refused, but not for the reason expected ('" + s.refusal_reason +
                        "'): " + probe.message);
    return result(true, probe.message, "refused as required");
  }
  if (s.refusal_or_never_running && !probe.sandbox_ran)
    return result(true, "accepted; no sandbox reached Running",
                  "accepted, but its sandbox never ran (as kubelet does for non_root on a root image)");
  return result(false, "accepted: " + probe.message,
                "fail_loudly: the platform accepted a config it must refuse (" + probe.message +
                    "); a weaker sandbox would have run. The eval was deleted at once.");
}

}  // namespace

std::vector<RefusalJob> take_refusals(std::vector<std::string>& paths,
                                      const scenario::DeploymentProfile& profile) {
  std::vector<RefusalJob> out;
  std::vector<std::string> rest;
  for (const auto& path : paths) {
    scenario::Scenario s = scenario::load_scenario(path);
    if (!s.expect_refused) {
      rest.push_back(path);
      continue;
    }
    policy::Plan plan = policy::plan_scenario(s, profile, {});
    std::vector<std::string> errors;
    for (const auto& d : plan.errors) errors.push_back(d.to_string());
    out.push_back({std::move(s), std::move(errors)});
  }
  paths = std::move(rest);
  return out;
}

void run_refusal(const RefusalJob& job, JobContext& ctx) {
  if (ctx.interrupted && ctx.interrupted->load()) return;
  const auto& s = job.scenario;
  const std::string name = "r" + std::to_string(++ctx.sequence);
  nlohmann::json record = {{"id", name},
                           {"scenario", s.name},
                           {"item_id", s.name + "/refusal"},
                           {"task", ""},
                           {"item", ""},
                           {"level", ""},
                           {"runtime", "-"},
                           {"node_class", "-"},
                           {"attempt", 1},
                           {"refusal", true},
                           {"facts", nlohmann::json::object()},
                           {"timings", nlohmann::json::object()},
                           {"posture", nullptr},
                           {"checks", nlohmann::json::array()},
                           {"error", nullptr}};
  const auto started = Clock::now();
  try {
    deploy::SandboxRequest request;
    request.run_id = ctx.run_id;
    request.name = name;
    request.item_id = s.name;
    request.eval_set = s.eval_set;
    request.node_class = s.matrix.node_classes.empty() ? "tier" : s.matrix.node_classes.front();
    auto probe = ctx.backend->submit_expecting_refusal(
        request, std::chrono::seconds(s.refusal_or_never_running ? 180 : 0));
    if (!probe) {  // the planner stands in for the platform
      probe = deploy::RefusalProbe{
          !job.planner_errors.empty(),
          job.planner_errors.empty() ? "the planner planned it" : "Error: " + joined(job.planner_errors),
          false, ""};
    }
    record["facts"] = {{"refusal_message", probe->message.substr(0, 4096)},
                       {"sandbox_ran", probe->sandbox_ran}};
    record["checks"].push_back(verify::to_json(judge(s, *probe)));
  } catch (const std::exception& e) {
    record["error"] = e.what();
    ctx.infrastructure_failed = true;
  }
  record["timings"]["total_s"] = std::chrono::duration<double>(Clock::now() - started).count();
  ctx.journal->append("sandbox", record);
  if (ctx.on_sandbox) ctx.on_sandbox(record);
}

}  // namespace isoharness::runner
