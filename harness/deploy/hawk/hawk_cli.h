// The hawk CLI, one call per method, each through run_command: argv only, a deadline,
// bounded output, and the node class's environment. What the CLI prints is parsed here
// and nowhere else (`Eval set ID:` line, `Error:` messages, the config-keys warning).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "harness/common/expected.h"
#include "harness/common/subprocess.h"
#include "harness/deploy/hawk/status_json.h"

namespace isoharness::deploy::hawk {

using Env = std::vector<std::pair<std::string, std::string>>;

// What `hawk human eval start` printed on success.
struct Started {
  std::string eval_set_id;
  bool unknown_config_keys = false;  // stderr warned "Unknown configuration keys found"
  std::string warning;               // that warning's line(s), cleaned and bounded
};

// Text only: the id from an `Eval set ID: <id>` line of stdout.
Expected<std::string> parse_eval_set_id(std::string_view out);

// Text only: the CLI's `Error: …` line from stderr (else its first non-empty line), cleaned
// of control characters and at most 500 characters.
std::string cli_error_message(std::string_view err);

class HawkCli {
 public:
  using Runner = std::function<Expected<RunResult>(const std::vector<std::string>&, const RunOptions&)>;
  HawkCli(std::string program, Env env, Runner runner);

  // `hawk human eval start CONFIG --human NAME --skip-confirm`. An error holds the CLI's
  // message; code is its exit status (-1 when it could not run or timed out).
  Expected<Started> start(const std::string& config_path, const std::string& human) const;
  // `hawk human eval ssh-command ID --timeout T`: stdout on exit 0.
  Expected<std::string> ssh_command(const std::string& id, int timeout_s) const;
  // `hawk status ID`, parsed.
  Expected<EvalStatus> status(const std::string& id) const;
  // `hawk delete ID`.
  Status remove(const std::string& id) const;

  const std::string& program() const { return program_; }

 private:
  Expected<RunResult> call(std::vector<std::string> args, std::chrono::seconds deadline) const;
  Error failure(const std::string& what, const Expected<RunResult>& r) const;

  std::string program_;
  Env env_;
  Runner runner_;
};

}  // namespace isoharness::deploy::hawk
