// The subcommands of `isoharness`. Each *_command.cc adds its subcommand to the app and
// returns the action to run when that subcommand was chosen. Actions return an exit code
// (see harness/common/error.h) and may throw UserError or InfraError, which main maps.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "harness/deploy/local/node_observer.h"
#include "harness/runner/sandbox_command.h"

namespace isoharness::cli {

using Action = std::function<int()>;
using Command = std::pair<CLI::App*, Action>;

// "a,b,,c" -> {"a", "b", "c"}: comma-separated option values.
std::vector<std::string> split_list(const std::string& text);

// The command line as main received it, argv[0] included: what a result records as run.argv.
using CommandLine = std::vector<std::string>;

// Whether a sandbox command lets the user choose the backend (`run`, `parity`, `selftest`)
// or reaches a sandbox that already runs (`check`: no --backend, the profile defaults to
// local.yaml).
enum class BackendFlag { choose, existing };

// The flags every command that reaches sandboxes shares, bound once to its config's
// SandboxCommand: --backend (unless existing), --deployment, --scenarios-dir, --out,
// --isoprobe-bundle, --accept-new-host-keys; and the command line, kept for the result.
void add_sandbox_options(CLI::App* sub, runner::SandboxCommand& command, const CommandLine& line,
                         BackendFlag backend = BackendFlag::choose);

// The report flags beyond --out: --metrics FILE (run, check, parity) and, for run and
// check, --sarif FILE, --previous FILE and --history DB (report.html's previous run).
enum class ReportFlags { metrics, all };
void add_report_options(CLI::App* sub, runner::SandboxCommand& command, ReportFlags flags);

// The newest posture run in the history `target` other than `result` itself with the same
// backend, deployment profile and scenarios; null when there is none. Throws what
// history::Database throws when the history cannot be opened.
nlohmann::json previous_run_in_history(const std::string& target, const nlohmann::json& result);

// `isoharness node-view`'s --container values ("[SERVICE=]ID"): the first is the agent's
// ("default"), every further one names its service. Throws UserError naming what is wrong.
struct NodeViewTarget {
  std::string service, id;
};
std::vector<NodeViewTarget> node_view_targets(const std::vector<std::string>& values);
// Where the node agent asks for one container, in order: --runtime-root alone when given
// (for --runtime's runtime, else both), else each isoharness run's runtime roots under
// state_dir, then each runtime's default root. --runtime restricts which runtime is asked.
// Throws UserError for a runtime or root that cannot be one.
std::vector<deploy::local::ContainerRef> node_view_candidates(const NodeViewTarget& target,
                                                              const std::string& runtime,
                                                              const std::string& runtime_root,
                                                              const std::string& state_dir);

Command version_command(CLI::App& app);
Command node_view_command(CLI::App& app);
Command plan_command(CLI::App& app);
Command local_command(CLI::App& app);
Command run_command(CLI::App& app, const CommandLine& line);
Command parity_command(CLI::App& app, const CommandLine& line);
Command history_command(CLI::App& app);
Command selftest_command(CLI::App& app, const CommandLine& line);
Command check_command(CLI::App& app, const CommandLine& line);
Command report_command(CLI::App& app);
Command baselines_command(CLI::App& app);

}  // namespace isoharness::cli
