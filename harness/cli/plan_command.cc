// `isoharness plan FILE`: resolves a scenario (or a bare eval-set config) against a
// deployment profile and prints the plan. Exit 0 accepted, 2 refused.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/common/build_info.h"
#include "harness/common/error.h"
#include "harness/common/install_paths.h"
#include "harness/policy/plan.h"
#include "harness/scenario/scenario.h"
#include "reports/reports.h"

namespace isoharness::cli {

namespace {

struct PlanArgs {
  std::string file;
  std::string deployment;
  std::string format = "text";
  bool deny_known_risks = false;
  std::string runtime_class;
  std::vector<std::string> task_sandboxes;  // scenarios whose items' sandbox facts the config takes
};

// --deployment, else deployments/local.yaml beside the scenario, else the default
// scenarios directory's (harness/common/install_paths.h); the current directory plays no part.
std::string find_deployment(const PlanArgs& a) {
  if (!a.deployment.empty()) return a.deployment;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path beside = fs::path(a.file).parent_path() / "deployments" / "local.yaml";
  if (fs::is_regular_file(beside, ec)) return beside.string();
  ResolvedPath scenarios = resolve_path(kScenariosDir);
  std::string looked = beside.string() + " (next to the scenario)";
  if (scenarios.found()) {
    fs::path standard = fs::path(scenarios.path) / "deployments" / "local.yaml";
    if (fs::is_regular_file(standard, ec)) return standard.string();
    looked += " and " + standard.string() + " (" + scenarios.source + ")";
  } else {
    looked += "; " + scenarios.problem;
  }
  throw UserError("no deployment profile: looked for " + looked + "; pass --deployment FILE");
}

reports::SarifFinding refusal_finding(const Diagnostic& d) {
  return {"plan.refused", "the platform refuses this config",
          "error",        d.item.empty() ? d.message : d.item + ": " + d.message,
          d.file,         d.line,
          d.column};
}

// The plan's refusals (errors) and every item's findings, each at its place in the file.
std::string plan_sarif(const policy::Plan& plan) {
  std::vector<reports::SarifFinding> findings;
  for (const auto& d : plan.errors) findings.push_back(refusal_finding(d));
  for (const auto& item : plan.items)
    for (const auto& f : item.findings) {
      const bool risk = f.severity == policy::Severity::known_risk;
      findings.push_back({f.code, risk ? "a known risk the plan accepts" : "a finding of the plan",
                          risk ? "warning" : "note", item.description + ": " + f.message, item.where.file,
                          item.where.line, item.where.column});
    }
  return reports::render_sarif(findings, isoharness_build_version());
}

void print_errors(const std::vector<Diagnostic>& errors) {
  for (const auto& d : errors) std::fprintf(stderr, "isoharness: error: %s\n", d.to_string().c_str());
}

// A config that does not load, as SARIF: each diagnostic an error at its file and line.
int print_load_errors_sarif(const PlanArgs& a, const UserError& e) {
  std::vector<reports::SarifFinding> findings;
  for (const auto& d : e.diagnostics()) findings.push_back(refusal_finding(d));
  if (findings.empty()) findings.push_back(refusal_finding(Diagnostic{a.file, 0, 0, "", e.what()}));
  std::cout << reports::render_sarif(findings, isoharness_build_version());
  print_errors(e.diagnostics());
  return kExitBadInput;
}

int run_plan(const PlanArgs& a) {
  std::vector<Diagnostic> load_errors;
  scenario::DeploymentProfile deployment;
  scenario::Scenario scenario;
  try {
    deployment = scenario::load_deployment(find_deployment(a));
    scenario = scenario::load_scenario(a.file);
    std::vector<scenario::Scenario> catalogue;
    for (const auto& path : a.task_sandboxes) catalogue.push_back(scenario::load_scenario(path));
    scenario::take_task_sandboxes(scenario, catalogue);
  } catch (const UserError& e) {
    if (a.format == "sarif") return print_load_errors_sarif(a, e);
    if (a.format != "json") throw;
    // JSON callers get the errors in the document as well.
    nlohmann::json doc = {
        {"schema", "isoharness.plan/v1"}, {"accepted", false}, {"items", nlohmann::json::array()}};
    doc["errors"] = nlohmann::json::array();
    auto diagnostics = e.diagnostics();
    if (diagnostics.empty()) diagnostics.push_back(Diagnostic{"", 0, 0, "", e.what()});
    for (const auto& d : diagnostics) {
      doc["errors"].push_back({{"item", d.item},
                               {"message", d.message},
                               {"file", d.file},
                               {"line", d.line > 0 ? nlohmann::json(d.line) : nlohmann::json(nullptr)},
                               {"column", d.column > 0 ? nlohmann::json(d.column) : nlohmann::json(nullptr)},
                               {"text", d.to_string()}});
    }
    std::cout << doc.dump(2) << "\n";
    print_errors(diagnostics);
    return kExitBadInput;
  }
  policy::PlanOptions options;
  options.deny_known_risks = a.deny_known_risks;
  if (!a.runtime_class.empty()) options.runtime_class_override = a.runtime_class;
  policy::Plan plan = policy::plan_scenario(scenario, deployment, options);

  if (a.format == "json") {
    policy::write_json(plan, std::cout);
  } else if (a.format == "sarif") {
    std::cout << plan_sarif(plan);
  } else if (plan.accepted()) {
    if (a.format == "values") {
      std::cout << policy::to_values_yaml(plan);
    } else {
      const bool color = isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
      std::cout << policy::to_text(plan, color);
    }
  }
  std::cout.flush();
  if (!plan.accepted()) {
    print_errors(plan.errors);
    std::fprintf(stderr, "isoharness: plan refused: %zu error(s)\n", plan.errors.size());
    return kExitBadInput;
  }
  return kExitPass;
}

}  // namespace

Command plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* sub = app.add_subcommand(
      "plan",
      "Resolve a scenario or eval-set config the way the platform does: per item the effective level, "
      "runtime "
      "class, rendered sandbox values, expectations and findings. Exit 0 accepted, 2 refused.");
  sub->add_option("file", args->file, "scenario file, or a bare eval-set config")->required();
  sub->add_option(
      "--deployment", args->deployment,
      "deployment profile (default: deployments/local.yaml next to the scenario file, else the default "
      "scenarios directory's: $ISOHARNESS_SCENARIOS_DIR, else "
      "<prefix>/share/isoharness/scenarios/deployments/local.yaml, else the source tree's)");
  sub->add_option(
         "--format", args->format,
         "text (for people), json (isoharness.plan/v1), values (YAML) or sarif (SARIF 2.1.0: refusals as "
         "errors, known risks as warnings, each at its line in the file, for a pull request)")
      ->check(CLI::IsMember({"text", "json", "values", "sarif"}));
  sub->add_flag("--deny-known-risks", args->deny_known_risks,
                "refuse the plan when an item carries a known risk (e.g. a GPU service under strict)");
  sub->add_option(
      "--runtime-class", args->runtime_class,
      "plan as if the eval set's isolation named this runtime_class (items may still name their own)");
  sub->add_option("--task-sandboxes", args->task_sandboxes,
                  "scenario files to read each task item's own sandbox from (services, GPU, image user), "
                  "matched by task package and name, item name, args and sample_ids, as a platform reads "
                  "a task's sandbox definition; repeatable")
      ->check(CLI::ExistingFile);
  return {sub, [args]() -> int { return run_plan(*args); }};
}

}  // namespace isoharness::cli
