#include "harness/runner/refusal.h"

#include <chrono>
#include <optional>

#include "harness/common/error.h"
#include "harness/policy/plan.h"

namespace isoharness::runner {
namespace {

using Clock = std::chrono::steady_clock;

// A runtime class no config names: planning against a deployment that configures it as the
// hardened class shows whether a scenario is refused for anything but the missing class.
constexpr const char* kAssumedHardenedClass = "isoharness-assumed-hardened-class";

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : "; ") + l;
  return out;
}

std::vector<std::string> error_lines(const policy::Plan& plan) {
  std::vector<std::string> out;
  for (const auto& d : plan.errors) out.push_back(d.to_string());
  return out;
}

// The verdict on what the platform (or the planner) did with the config.
verify::CheckResult judge(const scenario::Scenario& s, const deploy::RefusalProbe& probe) {
  const std::string expected =
      "refused with an Error: message" +
      (s.refusal_reason.empty() ? "" : " naming '" + s.refusal_reason + "'") +
      (s.refusal_or_never_running ? ", or accepted with no sandbox ever Running" : "");
  auto result = [&](bool pass, std::string observed, std::string reason) {
    return verify::CheckResult{"fail_loudly",       pass_or_fail(pass), expected,
                               std::move(observed), std::move(reason),  probe.detail.substr(0, 4096)};
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
                "fail_loudly: the platform accepted '" + s.name + "', a config it must refuse (" +
                    probe.message + "); a weaker sandbox would have run. The eval was deleted at once.");
}

RefusalJob declared_refusal(scenario::Scenario s, const scenario::DeploymentProfile& profile) {
  const policy::Plan plan = policy::plan_scenario(s, profile, {});
  RefusalJob job{std::move(s), error_lines(plan), "", "", 0, 0};
  job.rule =
      job.scenario.description.empty() ? "the platform must refuse this config" : job.scenario.description;
  job.item_id = job.scenario.name + "/refusal";
  return job;
}

// The item a refusal for the missing class is about: the first strict item that takes the
// deployment's hardened class, else the first strict item (a GPU item, say), else the first.
const policy::PlanItem& item_needing_hardened_class(const policy::Plan& plan) {
  for (const auto& item : plan.items)
    if (item.level == policy::Level::strict &&
        item.runtime_class_source == policy::RuntimeClassSource::hardened)
      return item;
  for (const auto& item : plan.items)
    if (item.level == policy::Level::strict) return item;
  return plan.items.front();
}

// A scenario the deployment refuses only because it configures no hardened runtime class.
std::optional<RefusalJob> strict_without_hardened_class(const scenario::Scenario& s,
                                                        const scenario::DeploymentProfile& profile) {
  if (profile.sandbox_runtime_class) return std::nullopt;
  const policy::Plan plan = policy::plan_scenario(s, profile, {});
  if (plan.accepted()) return std::nullopt;
  scenario::DeploymentProfile with_class = profile;
  with_class.runtime_classes.push_back(kAssumedHardenedClass);
  with_class.sandbox_runtime_class = kAssumedHardenedClass;
  with_class.sandbox_runtime_class_is_default = false;
  const policy::Plan assumed = policy::plan_scenario(s, with_class, {});
  if (!assumed.accepted() || assumed.items.empty()) return std::nullopt;  // bad input: reported as such
  const policy::PlanItem& item = item_needing_hardened_class(assumed);
  RefusalJob job{s, error_lines(plan), "", item.id, item.task_index, item.item_index};
  job.rule =
      "strict needs a hardened runtime class; a deployment that configures none refuses strict at "
      "submission";
  job.scenario.expect_refused = true;
  job.scenario.refusal_reason = kNoHardenedClassReason;
  job.scenario.refusal_or_never_running = false;
  return job;
}

nlohmann::json refusal_record(const RefusalJob& job, const std::string& id) {
  const auto& s = job.scenario;
  return {
      {"id", id},
      {"scenario", s.name},
      {"item_id", job.item_id},
      {"task", ""},
      {"item", ""},
      {"level", ""},
      {"runtime", "-"},
      {"node_class", "-"},
      {"attempt", 1},
      {"refusal",
       {{"rule", job.rule}, {"reason", s.refusal_reason}, {"or_never_running", s.refusal_or_never_running}}},
      {"facts", nlohmann::json::object()},
      {"timings", nlohmann::json::object()},
      {"posture", nullptr},
      {"checks", nlohmann::json::array()},
      {"error", nullptr}};
}

// What the platform did with the job's config; the planner answers for backends without one.
deploy::RefusalProbe probe_refusal(const RefusalJob& job, const std::string& name, const JobContext& ctx) {
  const auto& s = job.scenario;
  deploy::SandboxRequest request;
  request.run_id = ctx.settings.run_id;
  request.name = name;
  request.item_id = job.item_id;
  request.eval_set = s.eval_set;
  request.task_index = job.task_index;
  request.item_index = job.item_index;
  request.node_class = s.matrix.node_classes.empty() ? "tier" : s.matrix.node_classes.front();
  auto probe = ctx.backend.submit_expecting_refusal(
      request, std::chrono::seconds(s.refusal_or_never_running ? 180 : 0));
  if (probe) return *probe;
  return deploy::RefusalProbe{
      !job.planner_errors.empty(),
      job.planner_errors.empty() ? "the planner planned it" : "Error: " + joined(job.planner_errors), false,
      ""};
}

}  // namespace

std::vector<RefusalJob> take_refusals(std::vector<std::string>& paths,
                                      const scenario::DeploymentProfile& profile) {
  std::vector<RefusalJob> out;
  std::vector<std::string> rest;
  for (const auto& path : paths) {
    scenario::Scenario s = scenario::load_scenario(path);
    if (s.expect_refused) {
      out.push_back(declared_refusal(std::move(s), profile));
    } else if (auto job = strict_without_hardened_class(s, profile)) {
      out.push_back(std::move(*job));
    } else {
      rest.push_back(path);
    }
  }
  paths = std::move(rest);
  return out;
}

void run_refusal(const RefusalJob& job, JobContext& ctx) {
  if (ctx.state.interrupted()) return;
  const std::string name = "r" + std::to_string(ctx.state.next_sequence());
  nlohmann::json record = refusal_record(job, name);
  const auto started = Clock::now();
  try {
    const deploy::RefusalProbe probe = probe_refusal(job, name, ctx);
    record["facts"] = {{"refused", probe.refused},
                       {"refusal_message", probe.message.substr(0, 4096)},
                       {"sandbox_ran", probe.sandbox_ran}};
    record["checks"].push_back(verify::to_json(judge(job.scenario, probe)));
  } catch (const std::exception& e) {
    record["error"] = e.what();
    if (dynamic_cast<const RunStoppingError*>(&e)) ctx.state.stop_run(e.what());
  }
  record["timings"]["total_s"] = std::chrono::duration<double>(Clock::now() - started).count();
  ctx.journal.append("sandbox", record);
  if (ctx.on_sandbox) ctx.on_sandbox(record);
}

}  // namespace isoharness::runner
